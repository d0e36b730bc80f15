"""Material Inspector for markdown and plain-text books.

Pages are the stretches between form feeds (as `pdftotext` writes them); every paragraph
and table also keeps its line. Markdown: `#` headings (the number of `#` is the level), pipe
tables, YAML front matter (`language:` names the book's language). Plain text: a heading is a
short line standing alone, without final punctuation, that is numbered (`2.1 Word order`:
its depth is the level), written in capitals (level 1) or underlined with `===` (1) or `---`
(2); a table is a run of pipe rows, or of two or more lines with the same number of
tab-separated cells.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...api import InputError, read_utf8, split_front_matter
from .outline import Heading, Outline, Table

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
_PIPE_RULE = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_UNDERLINE = re.compile(r"^(=+|-+)\s*$")
MAX_HEADING_WORDS = 10


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


class _Lines:
    """The book's lines with their page and line numbers, read block by block."""

    def __init__(self, text: str, first_line: int) -> None:
        self.rows: list[tuple[int, int, str]] = []
        page = 1
        for offset, raw in enumerate(text.split("\n")):
            page += raw.count("\f")
            self.rows.append((page, first_line + offset, raw.replace("\f", "").rstrip()))
        self.at = 0

    def peek(self, ahead: int = 0) -> str | None:
        index = self.at + ahead
        return self.rows[index][2] if index < len(self.rows) else None

    def take(self) -> tuple[int, int, str]:
        self.at += 1
        return self.rows[self.at - 1]


def _table(lines: _Lines, pipe: bool) -> Table:
    page, number, first = lines.take()
    header = _cells(first) if pipe else [c.strip() for c in first.split("\t")]
    rows = []
    if pipe and _PIPE_RULE.match(lines.peek() or ""):
        lines.take()
    while (nxt := lines.peek()) is not None and nxt.strip():
        if pipe and not nxt.strip().startswith("|"):
            break
        if not pipe and nxt.count("\t") != first.count("\t"):
            break
        rows.append(_cells(lines.take()[2]) if pipe else lines.take()[2].split("\t"))
    return Table(page, header, [[c.strip() for c in r] for r in rows], line=number)


def plain_heading(line: str, before: str | None, after: str | None) -> int | None:
    """The level of a plain-text heading, or None for an ordinary line."""
    text = line.strip()
    words = text.split()
    if (
        not words
        or len(words) > MAX_HEADING_WORDS
        or text[-1] in ".:;,?!"
        or (before or "").strip()
    ):
        return None
    if after is not None and _UNDERLINE.match(after.strip()) and len(after.strip()) >= 3:
        return 1 if after.strip()[0] == "=" else 2
    if after is not None and after.strip():
        return None
    numbered = _NUMBERED.match(text)
    if numbered:
        return numbered.group(1).count(".") + 1
    letters = [c for c in text if c.isalpha()]
    return 1 if letters and all(c.isupper() for c in letters) else None


def read_text_book(text: str, first_line: int, markdown: bool) -> Outline:
    """The outline of a markdown or plain-text book."""
    outline = Outline()
    lines = _Lines(text, first_line)
    paragraph: list[str] = []
    start: tuple[int, int] = (1, first_line)

    def flush() -> None:
        if paragraph:
            outline.add_paragraph(start[0], " ".join(paragraph), line=start[1])
            paragraph.clear()

    previous: str | None = None
    while (current := lines.peek()) is not None:
        stripped = current.strip()
        heading = _MD_HEADING.match(stripped) if markdown else None
        level = None if markdown else plain_heading(current, previous, lines.peek(1))
        if not stripped:
            flush()
            lines.take()
        elif heading or level:
            flush()
            page, _, _ = lines.take()
            title = heading.group(2) if heading else stripped
            outline.items.append(Heading(page, len(heading.group(1)) if heading else level, title))
            if not markdown and _UNDERLINE.match((lines.peek() or "").strip()):
                lines.take()
        elif stripped.startswith("|") or (not markdown and "\t" in current and _tabbed(lines)):
            flush()
            outline.items.append(_table(lines, pipe=stripped.startswith("|")))
        else:
            page, number, _ = lines.take()
            if not paragraph:
                start = (page, number)
            paragraph.append(stripped)
        previous = current
    flush()
    return outline


def _tabbed(lines: _Lines) -> bool:
    """Whether the current line starts a tab-separated table (the next has as many cells)."""
    current, after = lines.peek(), lines.peek(1)
    return bool(current and after and after.count("\t") == current.count("\t"))


def read_markdown_or_text(path: Path) -> tuple[Outline, dict[str, Any], int]:
    """A `.md`/`.markdown` or any other text file: outline, front matter, pages."""
    text = read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty: no text", line=1)
    markdown = path.suffix.lower() in (".md", ".markdown")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # before the front matter is found
    meta, body, first_line = split_front_matter(text, path) if markdown else ({}, text, 1)
    outline = read_text_book(body, first_line, markdown)
    pages = body.count("\f") + 1
    return outline, meta, pages
