"""A book as a flat outline (headings, paragraphs, tables in reading order), then as sections.

Every reader (PDF, markdown, plain text) produces the outline; `sections` turns it into the
records the recipe works on: one section per heading, holding the paragraphs and tables up to
the next heading, with the path of headings above it and the pages it spans.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import BookBlock, BookSection

FRONT_MATTER = "Front matter"


@dataclass
class Heading:
    """A heading (level 1 is a chapter)."""

    page: int
    level: int
    text: str


@dataclass
class Paragraph:
    """A paragraph of running text."""

    page: int
    text: str
    ocr: bool = False
    line: int | None = None


@dataclass
class Table:
    """A table: its header and body rows, cells as text."""

    page: int
    header: list[str]
    rows: list[list[str]]
    line: int | None = None


@dataclass
class Outline:
    """What a reader found, in reading order."""

    items: list[Heading | Paragraph | Table] = field(default_factory=list)

    def add_paragraph(self, page: int, text: str, line: int | None = None) -> None:
        """Append a paragraph (an empty one is nothing)."""
        if text.strip():
            self.items.append(Paragraph(page, " ".join(text.split()), line=line))


def _block(item: Paragraph | Table) -> BookBlock:
    if isinstance(item, Paragraph):
        return BookBlock(kind="text", page=item.page, text=item.text, ocr=item.ocr, line=item.line)
    width = max([len(item.header), *(len(r) for r in item.rows)])
    header = item.header + [""] * (width - len(item.header))
    rows = [r + [""] * (width - len(r)) for r in item.rows]
    return BookBlock(kind="table", page=item.page, header=header, rows=rows, line=item.line)


def sections(outline: Outline) -> list[BookSection]:
    """One section per heading that has text or tables of its own (ids `s1`, `s2`, ...)."""
    found: list[BookSection] = []
    path: list[tuple[int, str]] = []
    current: BookSection | None = None
    for item in outline.items:
        if isinstance(item, Heading):
            path = [(lv, t) for lv, t in path if lv < item.level] + [(item.level, item.text)]
            current = None
            continue
        if current is None:
            titles = [t for _, t in path] or [FRONT_MATTER]
            current = BookSection(
                id=f"s{len(found) + 1}",
                title=titles[-1],
                path=titles,
                level=path[-1][0] if path else 0,
                pages=[],
            )
            found.append(current)
        current.blocks.append(_block(item))
        if item.page not in current.pages:
            current.pages.append(item.page)
    return found
