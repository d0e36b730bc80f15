"""Constituency trees as the syntax recipe works on them, and how their phrases are printed.

Trees are read by NLTK (`nltk.Tree`); each is turned into light `Node`s that carry what the
pattern matcher tests (the label split into category and function tags, trace indices
removed) and what answers are printed from (the span of visible words). Empty elements
(`-NONE-`: traces, null complementizers, understood subjects) stay in the tree, so patterns can
see them, but they are no words of the sentence: a phrase made only of them prints as nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ...api import require

EMPTY = "-NONE-"
BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}
EDGE_PUNCTUATION = {",", ".", ":", "``", "''", "-LRB-", "-RRB-", "-LSB-", "-RSB-", "-LCB-", "-RCB-"}
"""Part-of-speech tags trimmed from the edges of a printed phrase ("Pierre Vinken ," prints
as "Pierre Vinken")."""
VERB_TAGS = ("VB", "MD", "TO")
NEGATIONS = {"not", "n't", "never"}
PARTICLE = "PRT"
JOINERS = {"CC", "CONJP", ","}
"""What joins coordinated verbs or VPs in a chain ("buy, sell or hold")."""
PASSED_OVER = {"ADVP", "PRN", ",", ":", "``", "''", "-LRB-", "-RRB-"}
ADVERBIAL_TAGS = frozenset({"ADV", "TMP", "LOC", "MNR", "PRP", "DIR", "EXT"})
ESCAPES = {"\\/": "/", "\\*": "*"}
"""Penn Treebank escapes inside words: a slash or an asterisk after a backslash. Brackets and
quotes are tokens of their own (`BRACKETS`, and the two quote tokens), made text when the
sentence is detokenized."""
CLOSING = ",;:.?!"
"""Punctuation printed without a space before it."""
_INDEX = re.compile(r"[-=]\d+$")


@lru_cache(maxsize=4096)
def split_label(raw: str) -> tuple[str, str, frozenset[str]]:
    """(label without trace indices, category, function tags) of a Penn Treebank label.

    `NP-SBJ-1` is (`NP-SBJ`, `NP`, {SBJ}); `NP=2` (gapping) is (`NP`, `NP`, {}); labels that
    are themselves dashed (`-NONE-`, `-LRB-`) and punctuation tags are kept whole. Function
    tags are put in alphabetical order, so that the treebank's `PP-LOC-PRD` and `PP-PRD-LOC`
    are one label, `PP-LOC-PRD`.
    """
    if raw.startswith("-") and raw.endswith("-") and len(raw) > 2:
        return raw, raw, frozenset()
    label = raw
    while _INDEX.search(label):
        label = _INDEX.sub("", label)
    if not label:
        return raw, raw, frozenset()
    category, *tags = label.split("-")
    if not category:  # a label starting with a dash that is not a known dashed tag
        return label, label, frozenset()
    ordered = sorted({t for t in tags if t})
    return "-".join([category, *ordered]), category, frozenset(ordered)


@dataclass(eq=False, slots=True)
class Node:
    """A tree node (a phrase or a part-of-speech tag) or a word."""

    label: str
    """Category and function tags without trace indices (`NP-SBJ`); the word itself for a
    word."""
    category: str
    tags: frozenset[str]
    children: list[Node] = field(default_factory=list)
    is_word: bool = False
    start: int = 0
    """First visible word under the node (an index into the sentence's words)."""
    end: int = 0
    """One past the last visible word; `start == end` when the node holds only empty elements."""
    words: tuple[int, ...] = ()
    """Indices of the visible words under the node (empty elements have none)."""
    parent: Node | None = None

    @property
    def empty(self) -> bool:
        """True when nothing under the node is a visible word."""
        return not self.words

    @property
    def preterminal(self) -> bool:
        """True for a part-of-speech node (its only child is a word)."""
        return len(self.children) == 1 and self.children[0].is_word

    def __repr__(self) -> str:
        return f"Node({self.label!r}, {self.start}:{self.end})"


@dataclass
class ParsedTree:
    """A sentence's tree: the root, every node in preorder, and the visible words with tags."""

    root: Node
    nodes: list[Node]
    words: list[str]
    tags: list[str]
    sentence: str = ""
    """The sentence without empty elements, detokenized."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Where each word is in `sentence` (character offsets)."""

    def text(self, indices: Iterable[int]) -> str:
        """The words at `indices` as the sentence prints them.

        A gap becomes one space, none before a comma or other closing punctuation
        ("dumped, poured in and mixed").
        """
        ordered = sorted(indices)
        if not ordered:
            return ""
        pieces = []
        run_start = previous = ordered[0]
        for index in ordered[1:] + [-1]:
            if index != previous + 1:
                pieces.append(self.sentence[self.spans[run_start][0] : self.spans[previous][1]])
                run_start = index
            previous = index
        joined = pieces[0]
        for piece in pieces[1:]:
            joined += ("" if piece[:1] in CLOSING else " ") + piece
        return joined


def convert(tree: Any) -> ParsedTree:
    """An `nltk.Tree` as a `ParsedTree` (empty elements kept as nodes without words)."""
    words: list[str] = []
    tags: list[str] = []
    nodes: list[Node] = []

    def visit(subtree: Any, parent: Node | None, hidden: bool) -> Node:
        label, category, function_tags = split_label(subtree.label())
        node = Node(label, category, function_tags, parent=parent)
        nodes.append(node)
        hidden = hidden or category == EMPTY
        first = len(words)
        for child in subtree:
            if isinstance(child, str):
                child = unescape(child)
                word = Node(child, child, frozenset(), is_word=True, parent=node)
                if not hidden:
                    word.words = (len(words),)
                    word.start, word.end = len(words), len(words) + 1
                    words.append(child)
                    tags.append(category)
                node.children.append(word)
            else:
                node.children.append(visit(child, node, hidden))
        node.start, node.end = first, len(words)
        node.words = tuple(range(first, len(words)))
        return node

    root = visit(tree, None, False)
    sentence, spans = align(words)
    return ParsedTree(root, nodes, words, tags, sentence, spans)


def unescape(token: str) -> str:
    """A treebank word as text: the escaped slash of a fraction is a slash ("1/2")."""
    if "\\" not in token:
        return token
    for escaped, plain in ESCAPES.items():
        token = token.replace(escaped, plain)
    return token


@lru_cache(maxsize=1)
def _detokenizer() -> Any:
    require("syntax-qa", "syntax-qa")
    from nltk.tokenize.treebank import TreebankWordDetokenizer  # needs no downloaded data

    return TreebankWordDetokenizer()


_SURFACE = {**BRACKETS, "``": '"', "''": '"'}


def detokenize(tokens: list[str]) -> str:
    """Penn Treebank tokens as text (`do n't` → `don't`, `-LRB-` → `(`), by NLTK's detokenizer."""
    return str(_detokenizer().detokenize([BRACKETS.get(t, t) for t in tokens]))


def align(tokens: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """The detokenized sentence and each token's character span in it.

    The sentence is detokenized once; a phrase is then a slice of it, so that phrases print
    exactly as the sentence shows them (and without detokenizing every phrase anew).
    """
    sentence = detokenize(tokens)
    spans: list[tuple[int, int]] = []
    at = 0
    for token in tokens:
        surface = _SURFACE.get(token, token)
        found = sentence.find(surface, at)
        if found < 0 or sentence[at:found].strip():
            # the detokenizer changed this token (rare): print the sentence token by token
            return _spaced(tokens)
        spans.append((found, found + len(surface)))
        at = found + len(surface)
    return sentence, spans


def _spaced(tokens: list[str]) -> tuple[str, list[tuple[int, int]]]:
    surfaces = [_SURFACE.get(t, t) for t in tokens]
    spans, at = [], 0
    for surface in surfaces:
        spans.append((at, at + len(surface)))
        at += len(surface) + 1
    return " ".join(surfaces), spans


# --- printing phrases ------------------------------------------------------------------------


@dataclass(frozen=True)
class Phrase:
    """A printed phrase: its text, the word indices it covers and its syntactic category."""

    text: str
    words: tuple[int, ...]
    category: str


def trimmed(tree: ParsedTree, node: Node) -> tuple[int, ...]:
    """The node's visible words without punctuation at either edge."""
    words = list(node.words)
    while words and tree.tags[words[0]] in EDGE_PUNCTUATION:
        words.pop(0)
    while words and tree.tags[words[-1]] in EDGE_PUNCTUATION:
        words.pop()
    return tuple(words)


def phrase(tree: ParsedTree, node: Node) -> Phrase:
    """A node printed whole, as an answer or a placeholder is (its label is its category)."""
    words = trimmed(tree, node)
    return Phrase(tree.text(words), words, node.label)


def without_appositive(node: Node) -> Node:
    """A noun phrase without what commas set off after its head.

    "Pierre Vinken, 61 years old," is `(NP (NP Pierre Vinken) , (ADJP 61 years old) ,)`; its
    head, "Pierre Vinken", is the subject the paper's Figure 1 asks for, and "61 years old"
    one of its wrong options. A list ("A, B and C") is kept whole.
    """
    while node.category == "NP":
        children = [c for c in node.children if not c.empty]
        if (
            len(children) < 3
            or children[0].category != "NP"
            or children[1].category != ","
            or any(c.category in ("CC", "CONJP") for c in children)
        ):
            break
        node = children[0]
    return node


def _is_verb_word(node: Node) -> bool:
    """A verb, modal, infinitival `to` or negation (a part-of-speech node with its word)."""
    if not node.preterminal or node.empty:
        return False
    word = node.children[0].label.lower()
    return node.category.startswith(VERB_TAGS) or (node.category == "RB" and word in NEGATIONS)


def _verb_words(node: Node) -> list[Node]:
    """The verb words that are children of `node`, with their particles and conjunctions.

    Verbs, modals, infinitival `to` and negations; a particle (`PRT`: "pick *up*"); and the
    conjunctions and commas between two verbs coordinated as words ("bought *and* sold").
    """
    found: list[Node] = []
    pending: list[Node] = []
    for child in node.children:
        if child.empty:
            continue
        if _is_verb_word(child):
            found += pending
            pending = []
            found.append(child)
        elif child.category == PARTICLE and found:
            found.append(child)
        elif child.category in JOINERS and found:
            pending.append(child)
        elif child.category not in PASSED_OVER:
            pending = []
    return found


def _is_between(node: Node) -> bool:
    """What may stand between an auxiliary and the VP it governs: adverbials, asides."""
    return (
        node.empty
        or node.category in PASSED_OVER
        or bool(node.tags & ADVERBIAL_TAGS)
        or (node.preterminal and node.category == "RB")
    )


def _governed_vp(node: Node) -> Node | None:
    """The VP that continues the chain of `node`'s verb words, if any.

    The first VP child after the last verb word, with only adverbials and asides between
    ("had n't *yet* received"). A VP after an object is no part of the chain: in "passed a
    resolution in 1985 condemning ...", "condemning" modifies the resolution.
    """
    children = [c for c in node.children if not c.empty]
    verbs = [i for i, c in enumerate(children) if _is_verb_word(c)]
    if not verbs:
        vps = [c for c in children if c.category == "VP"]
        return vps[0] if len(vps) == 1 else None
    for child in children[verbs[-1] + 1 :]:
        if child.category == "VP":
            return child
        if child.category != PARTICLE and not _is_between(child):
            return None
    return None


def _coordinated(node: Node) -> list[Node] | None:
    """The verb words of coordinated VPs (`VP and VP`), with the conjunctions; None if not."""
    children = [c for c in node.children if not c.empty]
    vps = [c for c in children if c.category == "VP"]
    if len(vps) < 2 or any(_is_verb_word(c) for c in children):
        return None
    found: list[Node] = []
    pending: list[Node] = []
    for child in children:
        if child.category == "VP":
            chain = _chain_below(child)
            if chain:
                found += pending + chain
            pending = []
        elif child.category in JOINERS and found:
            pending.append(child)
    return found


def _chain_below(node: Node) -> list[Node]:
    """Verb words from `node` down the VPs its auxiliaries govern.

    Coordinated VPs each give theirs, joined by their conjunction ("pick up and go").
    """
    coordinated = _coordinated(node)
    if coordinated is not None:
        return coordinated
    governed = _governed_vp(node)
    return _verb_words(node) + (_chain_below(governed) if governed is not None else [])


def verb_chain(tree: ParsedTree, path: list[Node]) -> Phrase:
    """The main verb phrase along `path`, VP nodes from the clause's VP down.

    Auxiliaries, negation, the main verb and its particle: "will join", "does n't know"
    (printed "doesn't know"), "to pick up and go".

    Every node on the path gives its own verb words; the last continues down the VPs it
    governs. The category is the chain's shape (`chain_shape`: "modal", "past passive").
    """
    found: list[Node] = []
    for node in path[:-1]:
        found += _verb_words(node)
    found += _chain_below(path[-1])
    indices = tuple(sorted({i for w in found for i in w.words}))
    return Phrase(tree.text(indices), indices, "VP")


def path_between(top: Node, bottom: Node) -> list[Node]:
    """Nodes from `top` down to `bottom` (which is `top` or below it), both included."""
    path = [bottom]
    while path[-1] is not top:
        parent = path[-1].parent
        if parent is None:
            raise ValueError("the lower node is not under the upper one")
        path.append(parent)
    return path[::-1]
