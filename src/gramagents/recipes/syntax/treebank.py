"""Reading Penn Treebank bracketed trees: `.mrg` files and bracketed text, or NLTK's WSJ sample.

Each tree is parsed by NLTK (`nltk.Tree.fromstring`). NLTK's `BracketParseCorpusReader` is
not used for the user's files because it "recovers" a malformed tree (adds parentheses, or
returns a flat tree) with a note on stderr, which would turn a typo into wrong questions;
here a tree that does not parse is one error naming its file and line. The files are cut into
trees by counting parentheses, which also tells where each tree starts. A file holds one tree
or many, one per line or spread over lines, in the WSJ `( (S ...) )` wrapping, as a bare
`(S ...)` or under a `ROOT`/`TOP` node; lines starting with `#` or `%` between trees are
comments.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...api import InputError, read_utf8, require

SUFFIXES = (".mrg", ".tree", ".trees", ".ptb", ".txt", ".bracketed")
"""Files of a source folder that are read as treebank files."""
NLTK_SAMPLE = "nltk:treebank"
DOWNLOAD_HINT = (
    "NLTK's treebank sample is not installed; install it once with "
    "python -c \"import nltk; nltk.download('treebank')\" (it needs the internet), "
    "or give --source a folder of .mrg files"
)
_ROOTS = {"", "ROOT", "TOP"}
_INDEX_IN_ERROR = re.compile(r"at index (\d+)")
_PARENS = re.compile(r"[()]")


@dataclass(frozen=True)
class RawTree:
    """One tree as read: where it is, its bracketed text, and NLTK's tree."""

    file: str
    line: int
    number: int
    """1-based position of the tree in its file."""
    text: str
    tree: Any


def resolve(source: Path) -> Path:
    """The file or folder `--source` names (`nltk:treebank`: NLTK's sample, if installed)."""
    require("syntax-qa", "syntax-qa")
    if str(source) == NLTK_SAMPLE:
        import nltk

        try:
            return Path(nltk.data.find("corpora/treebank/combined"))
        except LookupError:
            raise InputError(NLTK_SAMPLE, DOWNLOAD_HINT) from None
    if not source.exists():
        raise InputError(source, "no such file or folder")
    return source


def treebank_files(root: Path) -> list[Path]:
    """The treebank files of a source: the file itself, or a folder's files in name order."""
    if root.is_file():
        return [root]
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(SUFFIXES))
    if not files:
        raise InputError(root, f"no treebank files ({', '.join(SUFFIXES)}) in this folder")
    return files


class _Lines:
    """Character offset to 1-based line number."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def _check_between(path: Path, text: str, start: int, end: int, lines: _Lines) -> None:
    """Text between trees may only be blank lines and comments."""
    between = text[start:end]
    if not between.strip():
        return
    at = start
    for line in between.splitlines(keepends=True):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "%")):
            column = at + line.index(stripped[0])
            raise InputError(
                path,
                f"text outside a bracketed tree: '{stripped[:40]}'",
                line=lines.of(column),
            )
        at += len(line)


def split_trees(path: Path, text: str) -> Iterator[tuple[int, int, int]]:
    """(start, end, line) of each top-level bracketed tree of a file's text."""
    lines = _Lines(text)
    depth = 0
    start = previous_end = 0
    for match in _PARENS.finditer(text):
        if match.group() == "(":
            if depth == 0:
                _check_between(path, text, previous_end, match.start(), lines)
                start = match.start()
            depth += 1
            continue
        depth -= 1
        if depth < 0:
            raise InputError(path, "a ')' closes no open '('", line=lines.of(match.start()))
        if depth == 0:
            yield start, match.end(), lines.of(start)
            previous_end = match.end()
    if depth > 0:
        raise InputError(
            path, f"the tree starting here is never closed ({depth} '(' open at the end)",
            line=lines.of(start),
        )  # fmt: skip
    _check_between(path, text, previous_end, len(text), lines)


def parse_tree(path: Path, text: str, line: int, offset: int, lines: _Lines | None = None) -> Any:
    """NLTK's tree of one bracketed tree; a tree that does not parse names its line."""
    from nltk import Tree

    try:
        tree = Tree.fromstring(text, remove_empty_top_bracketing=True)
    except ValueError as exc:
        message = str(exc).splitlines()[0].replace("Tree.read(): ", "")
        where = _INDEX_IN_ERROR.search(str(exc))
        if where is not None and lines is not None:
            line = lines.of(offset + int(where.group(1)))
        raise InputError(path, f"malformed tree: {message}", line=line) from None
    while isinstance(tree, Tree) and tree.label() in _ROOTS and len(tree) == 1:
        if not isinstance(tree[0], Tree):
            break
        tree = tree[0]
    if not isinstance(tree, Tree) or not tree.leaves():
        raise InputError(path, "a tree with no words", line=line)
    return tree


def read_file(path: Path, shown: str) -> list[RawTree]:
    """Every tree of one file."""
    text = read_utf8(path).replace("\r\n", "\n").replace("\r", "\n")
    lines = _Lines(text)
    trees = []
    for number, (start, end, line) in enumerate(split_trees(path, text), start=1):
        chunk = text[start:end]
        tree = parse_tree(path, chunk, line, start, lines)
        trees.append(RawTree(shown, line, number, " ".join(chunk.split()), tree))
    return trees
