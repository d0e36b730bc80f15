"""The pattern language over constituency trees (the paper's Figure 3), parsed and matched.

A pattern is a tree written like a Penn Treebank tree, whose labels are tests::

    (S@ .* .-SBJ=answer .* VP@=verb .*)

matches a clause (`S`, `SQ`, `SINV`, ...) with a child carrying the `-SBJ` function tag and a
later `VP` child, and captures them as `answer` and `verb`.

Labels:

- `.` any node: a phrase, a part-of-speech tag or a word;
- `NP` a node labelled exactly `NP` (no function tags; trace indices never count);
  `NP-SBJ` exactly `NP-SBJ`; `-NONE-` an empty element; `'.'` the tag `.` (quoted, since
  `.` alone means any node); function tags are compared in any order (`PP-PRD-LOC` is
  `PP-LOC-PRD`);
- `VB@` a family: every category starting with `VB` (`VB`, `VBD`, `VBZ`, ...), whatever its
  function tags; `NP@` is any NP, `PP-LOC@` any PP whose tags include LOC;
- `.-TMP` any node whose function tags include `TMP` (`.-TMP-PRD` needs both);
- `~L` negation, `L&M` both, `L|M` either (`~` binds tightest, `|` loosest);
- `$NAME` a named label expression from the patterns file's `labels:`.

Nodes: `(L e1 e2 ...)` is a node labelled L whose children are, in order and all of them,
matched by the elements `e1 e2 ...`; an element followed by `*` matches zero or more children
in a row (horizontal repetition). `L` alone, or `(L)`, is a node labelled L with any children.
`(L >* P)` is a node labelled L such that P matches it or a node reached from it by descending
zero or more times through children that are also labelled L (recursive descent: from a VP
down the chain of VPs of its auxiliaries). `L=name` captures the node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .trees import Node, split_label

Test = Callable[[Node], bool]
Captures = dict[str, Node]


class PatternError(ValueError):
    """A pattern that cannot be read; the message says where."""


# --- labels -------------------------------------------------------------------------------------


def _any(node: Node) -> bool:
    return True


class _Labels:
    """Compiles label expressions; `$NAME` is a named expression, tested as one atom."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.compiled: dict[str, Test] = {}
        self.compiling: set[str] = set()

    def expression(self, text: str) -> Test:
        alternatives = [
            [self.unary(part) for part in _split_outside_quotes(alternative, "&")]
            for alternative in _split_outside_quotes(text, "|")
        ]
        if len(alternatives) == 1 and len(alternatives[0]) == 1:
            return alternatives[0][0]
        return lambda n: any(all(t(n) for t in conj) for conj in alternatives)

    def unary(self, text: str) -> Test:
        if text.startswith("~"):
            inner = self.unary(text[1:])
            return lambda n: not inner(n)
        if text.startswith("$"):
            return self.named(text[1:])
        return _atom(text)

    def named(self, name: str) -> Test:
        if name in self.compiled:
            return self.compiled[name]
        if name not in self.names:
            raise PatternError(f"unknown named label '${name}'")
        if name in self.compiling:
            raise PatternError(f"the named label '${name}' refers to itself")
        self.compiling.add(name)
        test = self.compiled[name] = self.expression("".join(self.names[name].split()))
        return test


def _atom(text: str) -> Test:
    if text == ".":
        return _any
    if len(text) >= 3 and text[0] == text[-1] == "'":
        literal = text[1:-1]
        return lambda n: not n.is_word and n.label == literal
    if text.startswith(".-"):
        wanted = frozenset(t for t in text[2:].split("-") if t)
        if not wanted:
            raise PatternError(f"'{text}' names no function tag")
        return lambda n: not n.is_word and wanted <= n.tags
    if text.endswith("@"):
        prefix = text[:-1]
        if not prefix:
            raise PatternError("'@' needs a label before it, as in VB@")
        head, *tags = prefix.split("-")
        needed = frozenset(t for t in tags if t)
        return lambda n: not n.is_word and n.category.startswith(head) and needed <= n.tags
    if not text or any(c in text for c in "()~&|=*$"):
        raise PatternError(f"'{text}' is not a label")
    label = split_label(text)[0]
    return lambda n: not n.is_word and n.label == label


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == "'":
            quoted = not quoted
        if char == separator and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    if any(not p for p in parts):
        raise PatternError(f"'{text}': an empty side of '{separator}'")
    return parts


# --- patterns -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodePattern:
    """A node test, what it captures, and what its children must be."""

    test: Test
    capture: str | None = None
    children: tuple[Element, ...] | None = None
    """None: any children."""
    descend: NodePattern | None = None
    """`(L >* P)`: P matches this node or one below it through nodes that pass `test`."""
    needed: int = 0
    """How many children the node needs at least (its elements that do not repeat): a node
    with fewer is passed over without trying the sequence."""


@dataclass(frozen=True)
class Element:
    """A child position of a node pattern: a node pattern, once or repeated."""

    node: NodePattern
    repeat: bool = False


_TOKEN = re.compile(r"\s*(\(|\)|>\*|'[^']*'[^\s()]*|[^\s()]+)")


def _tokens(source: str) -> list[str]:
    tokens, at = [], 0
    source = source.strip()
    while at < len(source):
        match = _TOKEN.match(source, at)
        if match is None:
            raise PatternError(f"cannot read the pattern from '{source[at : at + 20]}'")
        tokens.append(match.group(1))
        at = match.end()
    return tokens


def _word(token: str, labels: _Labels) -> tuple[Test, str | None, bool]:
    """A label token: its test, its capture name, and whether it repeats (`*`)."""
    repeat = token.endswith("*") and not token.endswith("'*'")
    if repeat:
        token = token[:-1]
    capture = None
    if "=" in token.lstrip("'"):
        split_at = token.rindex("=")
        token, capture = token[:split_at], token[split_at + 1 :]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", capture):
            raise PatternError(f"'={capture}': a capture is a name (letters, digits, _)")
    return labels.expression(token), capture, repeat


class _Parser:
    def __init__(self, source: str, names: dict[str, str]) -> None:
        self.tokens = _tokens(source)
        self.at = 0
        self.labels = _Labels(names)

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise PatternError("the pattern ends too early (a '(' is not closed)")
        self.at += 1
        return token

    def element(self) -> Element:
        token = self.take()
        if token == ")" or token == ">*":
            raise PatternError(f"'{token}' where a node was expected")
        if token != "(":
            test, capture, repeat = _word(token, self.labels)
            return Element(NodePattern(test, capture), repeat)
        node = self.inner()
        repeat = False
        if self.peek() == "*":
            self.take()
            repeat = True
        return Element(node, repeat)

    def inner(self) -> NodePattern:
        """After '(': the label, then `>* P` or the children, then ')'."""
        test, capture, repeat = _word(self.take(), self.labels)
        if repeat:
            raise PatternError("'*' repeats a child, not the node its parentheses open")
        if self.peek() == ">*":
            self.take()
            if self.peek() != "(":
                target = self.element().node
            else:
                self.take()
                target = self.inner()
            self.expect_close()
            return NodePattern(test, capture, descend=target)
        children: list[Element] = []
        while self.peek() != ")":
            children.append(self.element())
        self.expect_close()
        needed = sum(1 for c in children if not c.repeat)
        return NodePattern(test, capture, tuple(children) if children else None, needed=needed)

    def expect_close(self) -> None:
        if self.take() != ")":
            raise PatternError("expected ')'")


def compile_pattern(source: str, names: dict[str, str] | None = None) -> NodePattern:
    """Parse a pattern; a mistake raises PatternError saying what is wrong."""
    parser = _Parser(source, names or {})
    element = parser.element()
    if element.repeat:
        raise PatternError("the whole pattern cannot repeat")
    if parser.peek() is not None:
        raise PatternError(f"unexpected '{parser.peek()}' after the pattern's end")
    return element.node


def captures_of(pattern: NodePattern) -> set[str]:
    """Every capture name a pattern uses."""
    names = {pattern.capture} if pattern.capture else set()
    for element in pattern.children or ():
        names |= captures_of(element.node)
    if pattern.descend is not None:
        names |= captures_of(pattern.descend)
    return names


# --- matching -----------------------------------------------------------------------------------


def match_node(pattern: NodePattern, node: Node, captures: Captures) -> Iterator[Captures]:
    """Every way `pattern` matches at `node`, as the captures each way makes."""
    if len(node.children) < pattern.needed or not pattern.test(node):
        return
    if pattern.capture is not None:
        captures = {**captures, pattern.capture: node}
    if pattern.descend is not None:
        yield from _descend(pattern, pattern.descend, node, captures)
    elif pattern.children is None:
        yield captures
    else:
        yield from _sequence(pattern.children, 0, node.children, 0, captures)


def _descend(
    chain: NodePattern, target: NodePattern, node: Node, captures: Captures
) -> Iterator[Captures]:
    yield from match_node(target, node, captures)
    for child in node.children:
        if not child.is_word and chain.test(child):
            yield from _descend(chain, target, child, captures)


def _sequence(
    elements: tuple[Element, ...], i: int, children: list[Node], j: int, captures: Captures
) -> Iterator[Captures]:
    if i == len(elements):
        if j == len(children):
            yield captures
        return
    element = elements[i]
    if element.repeat:
        yield from _sequence(elements, i + 1, children, j, captures)
        if j < len(children):
            for found in match_node(element.node, children[j], captures):
                yield from _sequence(elements, i, children, j + 1, found)
    elif j < len(children):
        for found in match_node(element.node, children[j], captures):
            yield from _sequence(elements, i + 1, children, j + 1, found)


def find_all(pattern: NodePattern, nodes: list[Node]) -> Iterator[Captures]:
    """Every match of `pattern` at any of `nodes` (each distinct set of captures once)."""
    seen: set[tuple[int, ...]] = set()
    for node in nodes:
        for captures in match_node(pattern, node, {}):
            key = tuple(id(captures[name]) for name in sorted(captures))
            if key not in seen:
                seen.add(key)
                yield captures
