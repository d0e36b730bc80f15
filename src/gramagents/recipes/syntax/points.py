"""The nine knowledge points as data (`prompts/syntax/patterns.yaml`), and their matches in a tree.

A match is one question's worth of syntax: in this sentence, for this knowledge point, the
phrase that fills the question's placeholder (the *anchor*, e.g. the verb phrase whose subject
is asked for), the answer phrase, and the answer's syntactic category. With the matches of a
sentence come the phrases that can serve as wrong answers: the sentence's other phrases that
do not overlap the answer and are not a right answer to the same question.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...api import InputError, file_hash, find_resource, load_yaml_with_lines, locate, read_utf8
from .categories import category, chain_shape
from .metrics import words
from .patterns import NodePattern, PatternError, captures_of, compile_pattern, find_all
from .trees import Node, ParsedTree, Phrase, path_between, phrase, verb_chain, without_appositive

POINTS = ("GS", "SC", "DO", "IO", "MVP", "ADJ", "ADV", "CO", "PPA")
"""The paper's nine knowledge points, in the order of its Table 1."""


def point_order(point: str) -> tuple[int, str]:
    """Sort key of knowledge points: the paper's order, then any other point by name."""
    return (POINTS.index(point), point) if point in POINTS else (len(POINTS), point)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Render(_Strict):
    """How a capture is printed: its words (`text`), or the verb chain between two captures."""

    text: str | None = None
    verbs: list[str] | None = Field(default=None, min_length=1, max_length=2)
    appositive: bool = True
    """With `text`: False prints a noun phrase without what commas set off after its head
    ("Pierre Vinken", not "Pierre Vinken, 61 years old")."""

    @model_validator(mode="after")
    def _one(self) -> Render:
        if (self.text is None) == (self.verbs is None):
            raise ValueError("give either 'text: CAPTURE' or 'verbs: [CAPTURE, CAPTURE]'")
        if self.verbs is not None and not self.appositive:
            raise ValueError("'appositive' applies to 'text', not to 'verbs'")
        return self

    def names(self) -> list[str]:
        """The captures it prints from."""
        return [self.text] if self.text is not None else list(self.verbs or [])


class PatternSpec(_Strict):
    """One pattern of a point and how its captures become a question."""

    match: str
    answer: Render
    anchor: Render
    category: str | None = None
    """A capture whose category is the answer's (default: the answer's own; see
    `categories`)."""


class PointSpec(_Strict):
    """A knowledge point: its name in questions and where it is in trees."""

    name: str
    patterns: list[PatternSpec] = Field(min_length=1)


class PatternsFile(_Strict):
    """The whole patterns file."""

    labels: dict[str, str] = Field(default_factory=dict)
    points: dict[str, PointSpec]


@dataclass(frozen=True)
class CompiledPattern:
    """A pattern ready to match, with how its captures are printed."""

    point: str
    index: int
    pattern: NodePattern
    spec: PatternSpec


@dataclass(frozen=True)
class Points:
    """The loaded patterns file: compiled patterns by point, and where it came from."""

    path: Path
    hash: str
    specs: dict[str, PointSpec]
    patterns: list[CompiledPattern]

    def only(self, point: str) -> Points:
        """The same file with the patterns of one point only."""
        return replace(self, patterns=[p for p in self.patterns if p.point == point])


def load_points(name: str, wanted: list[str] | None = None) -> Points:
    """Load and compile a patterns file (under `prompts/`, user copies first).

    A mistake is one error naming the file, the line and the field (`points.GS.patterns[0]`).
    """
    return load_points_file(find_resource("prompts", name), wanted)


def load_points_file(path: Path, wanted: list[str] | None = None) -> Points:
    """Load and compile the patterns file at `path` (see `load_points`)."""
    data, lines = load_yaml_with_lines(path, read_utf8(path))
    try:
        parsed = PatternsFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise _located(path, data, lines, tuple(error["loc"]), error["msg"]) from None
    compiled = []
    for point, spec in parsed.points.items():
        if wanted is not None and point not in wanted:
            continue
        for index, pattern_spec in enumerate(spec.patterns):
            where = ("points", point, "patterns", index, "match")
            try:
                pattern = compile_pattern(pattern_spec.match, parsed.labels)
            except PatternError as exc:
                raise _located(path, data, lines, where, str(exc)) from None
            missing = _missing_captures(pattern, pattern_spec)
            if missing:
                raise _located(path, data, lines, where, f"the pattern captures no '{missing}'")
            compiled.append(CompiledPattern(point, index, pattern, pattern_spec))
    unknown = [p for p in wanted or [] if p not in parsed.points]
    if unknown:
        raise InputError(path, f"no patterns for the point(s) {', '.join(unknown)}", field="points")
    return Points(path, file_hash(path), parsed.points, compiled)


def _missing_captures(pattern: NodePattern, spec: PatternSpec) -> str | None:
    names = captures_of(pattern)
    needed = [*spec.answer.names(), *spec.anchor.names()]
    if spec.category is not None:
        needed.append(spec.category)
    return next((n for n in needed if n not in names), None)


def _located(
    path: Path, data: Any, lines: dict[Any, int], loc: tuple[Any, ...], message: str
) -> InputError:
    line, field = locate(data, lines, loc)
    return InputError(path, message, line=line, field=field or None)


# --- matches in a tree ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """One match of a point in a sentence."""

    point: str
    pattern: int
    anchor: Phrase
    answer: Phrase
    category: str
    """The answer's syntactic category (`categories`), by which questions are sampled."""
    kind: str
    """The family of the answer (`kind_of`) that its wrong answers are preferably drawn from."""
    chained: bool
    """The anchor is a verb chain: matches whose chains share words ask about one verb."""


def _render(tree: ParsedTree, render: Render, captures: dict[str, Node]) -> tuple[Phrase, Node]:
    """The printed phrase, and the node it is printed from (a chain's lowest VP)."""
    if render.text is not None:
        node = captures[render.text]
        if not render.appositive:
            node = without_appositive(node)
        return phrase(tree, node), node
    names = render.verbs or []
    bottom = captures[names[-1]]
    return verb_chain(tree, path_between(captures[names[0]], bottom)), bottom


def find_matches(tree: ParsedTree, points: Points) -> list[Found]:
    """Every match of every pattern in the tree, each (point, anchor, answer) once.

    A match whose answer or placeholder prints as nothing (a trace, an understood subject) or
    whose answer shares words with its placeholder (a negation of the verb asked about) is
    no question.
    """
    found: list[Found] = []
    seen: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()
    for compiled in points.patterns:
        spec = compiled.spec
        for captures in find_all(compiled.pattern, tree.nodes):
            answer, node = _render(tree, spec.answer, captures)
            anchor, _ = _render(tree, spec.anchor, captures)
            if not answer.words or not anchor.words or set(answer.words) & set(anchor.words):
                continue
            key = (compiled.point, anchor.words, answer.words)
            if key in seen:
                continue
            seen.add(key)
            chain = spec.answer.verbs is not None
            if spec.category is not None:
                named = category(captures[spec.category])
            else:
                named = chain_shape(tree, answer.words) if chain else category(node)
            kind = "V" if chain else kind_of(node.category)
            chained = spec.anchor.verbs is not None
            found.append(
                Found(compiled.point, compiled.index, anchor, answer, named, kind, chained)
            )
    return found


# --- wrong answers ------------------------------------------------------------------------------

_KINDS = {
    "NP": "NP", "NX": "NP", "WHNP": "NP", "QP": "NP", "NN": "NP", "NNS": "NP", "NNP": "NP",
    "NNPS": "NP", "PRP": "NP", "CD": "NP", "PP": "PP", "WHPP": "PP", "ADJP": "ADJP",
    "JJ": "ADJP", "JJR": "ADJP", "JJS": "ADJP", "ADVP": "ADVP", "WHADVP": "ADVP", "RB": "ADVP",
    "S": "CLAUSE", "SBAR": "CLAUSE", "SQ": "CLAUSE", "SINV": "CLAUSE", "SBARQ": "CLAUSE",
    "RRC": "CLAUSE", "VP": "CLAUSE", "UCP": "CLAUSE",
}  # fmt: skip
_CANDIDATE_CATEGORIES = {"NP", "PP", "ADJP", "ADVP", "S", "SBAR", "QP", "UCP", "RRC"}
MAX_SHARE = 0.75
"""A phrase covering more of the sentence than this is no candidate wrong answer."""


def kind_of(category: str) -> str:
    """The family of a category that wrong answers are preferably drawn from."""
    head = category.split("-")[0].split(" ")[0]
    if head.startswith(("VB", "MD", "TO")):
        return "V"
    return _KINDS.get(head, "OTHER")


@dataclass(frozen=True)
class Candidate:
    """A phrase of the sentence that may serve as a wrong answer."""

    text: str
    words: frozenset[int]
    kind: str


def candidates(tree: ParsedTree) -> list[Candidate]:
    """The sentence's phrases (and main verb phrases), in sentence order.

    Phrases that read the same (`metrics.words`: "about 18%" and the quantity "about 18",
    "You" and "you") are offered once.
    """
    limit = MAX_SHARE * len(tree.words)
    found: dict[tuple[str, ...], Candidate] = {}
    for node in tree.nodes:
        if node.is_word or node.empty or node.parent is None:
            continue
        if node.category == "VP":
            if node.parent.category == "VP":
                continue  # the chain is printed from the top VP of a clause
            printed = verb_chain(tree, [node])
            kind = "V"
        elif node.category in _CANDIDATE_CATEGORIES:
            printed = phrase(tree, node)
            kind = kind_of(node.category)
        else:
            continue
        said = words(printed.text)
        if printed.words and said and len(printed.words) <= limit and said not in found:
            found[said] = Candidate(printed.text, frozenset(printed.words), kind)
    return sorted(found.values(), key=lambda c: min(c.words))


def same_question(found: list[Found]) -> list[list[Found]]:
    """Per match, the matches of its point that answer the same question (itself included).

    The same question: the placeholder reads the same (`metrics.words`), or, for a verb
    placeholder, the two chains share a verb ("bought" and "bought and sold"; patterns that
    print the chain from different VPs of one clause).
    """
    by_point: dict[str, list[Found]] = defaultdict(list)
    for match in found:
        by_point[match.point].append(match)
    return [[o for o in by_point[m.point] if _alike(m, o)] for m in found]


def _alike(one: Found, other: Found) -> bool:
    if words(one.anchor.text) == words(other.anchor.text):
        return True
    return one.chained and other.chained and bool(set(one.anchor.words) & set(other.anchor.words))


def wrong_answers(found: list[Found], pool: list[Candidate]) -> list[tuple[list[str], int, bool]]:
    """Per match: its wrong answers, how many are of the answer's kind, whether it is unique.

    Wrong answers of the answer's kind (noun phrases for a noun phrase...) come first.

    Every right answer to the same question (`same_question`) is left out, and so is every
    phrase that shares words with one of them or with the placeholder, or reads the same as
    one of them (`metrics.words`: case and punctuation aside). A question with several right
    answers is not asked as fill-in-the-blank.
    """
    results = []
    for match, alike in zip(found, same_question(found), strict=True):
        taken = {i for other in alike for i in other.answer.words} | set(match.anchor.words)
        said = {words(other.answer.text) for other in alike} | {words(match.anchor.text)}
        same: list[str] = []
        other_kind: list[str] = []
        for candidate in pool:
            if candidate.words & taken or words(candidate.text) in said:
                continue
            (same if candidate.kind == match.kind else other_kind).append(candidate.text)
        unique = len({words(other.answer.text) for other in alike}) == 1
        results.append(([*same, *other_kind], len(same), unique))
    return results
