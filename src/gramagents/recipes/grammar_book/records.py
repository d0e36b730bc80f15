"""Records of the grammar-book recipe: the book as read, the windows the extractor reads, points.

Sentence pairs and minimal pairs are the shared `records.Instance` (kind `example`: the
target-language sentence in `text`, its English in `annotations.english`; kind `pair`: the
ungrammatical twin in `text`, the grammatical sentence in `annotations.correction`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...api import GrammarPoint, Record


class BookBlock(Record):
    """A paragraph or a table of the book, where it was found."""

    kind: Literal["text", "table"]
    page: int
    """1-based page number (for a text file: the page between form feeds)."""
    text: str = ""
    """The paragraph (kind `text`)."""
    header: list[str] = Field(default_factory=list)
    """Column names (kind `table`)."""
    rows: list[list[str]] = Field(default_factory=list)
    """Body rows, cells as text (kind `table`)."""
    ocr: bool = False
    """The text was recognised from an image of the page."""
    line: int | None = None
    """1-based line in a text or markdown book."""


class BookSection(Record):
    """A section of the book: a heading and what follows it up to the next heading."""

    id: str
    title: str
    path: list[str]
    """Headings from the chapter down to this section."""
    level: int
    """Heading depth: 1 for a chapter (0 for text before the first heading)."""
    pages: list[int]
    blocks: list[BookBlock] = Field(default_factory=list)
    decision: Literal["keep", "drop", "undecided"] | None = None
    """Whether the extractor reads it (None: no section filter has run)."""
    reason: str = ""
    """Why, in words (the heading and the term that decided, or the classifier's reason)."""
    decided_by: Literal["", "words", "classifier", "front matter"] = ""


class BookWindow(Record):
    """What one call of the grammar-point extractor reads."""

    id: str
    section_id: str
    section: str
    """The section's path of headings, joined."""
    kind: Literal["text", "table-row"]
    text: str
    """The sentences of the window (for a table row: the text around the table)."""
    header: list[str] = Field(default_factory=list)
    row: list[str] = Field(default_factory=list)
    """The table row (kind `table-row`), cell by cell."""
    row_text: str = ""
    """The row as `column: cell; ...`."""
    pages: list[int]
    """Pages the window's text and row come from."""
    sentences: tuple[int, int] | None = None
    """The section's sentences [start, end) the window holds (kind `text`)."""
    table_page: int | None = None
    """The page of the row's table (kind `table-row`)."""


class BookPoint(GrammarPoint):
    """A grammar point extracted from the book (merged across the windows that found it)."""

    pages: list[int] = Field(default_factory=list)
    """Pages of the book the point was found on."""
    windows: list[str] = Field(default_factory=list)
    """The windows that yielded it (several after merging duplicates)."""
    origins: list[Literal["text", "table-row"]] = Field(default_factory=list)
    """Whether it came from prose, a table row, or both."""
    section: str = ""
    merged: list[str] = Field(default_factory=list)
    """Ids of the duplicates merged into this point."""
    model: str | None = None
    prompt_hash: str | None = None


class PointCheck(Record):
    """Whether a grammar point other than a sentence's own also applies to it (the back-checker).

    A point that applies is never offered as a wrong option for the sentence, nor the sentence
    as a wrong option for the point. For a minimal pair's twin, `point_id` is the pair's own
    point and `applies` says whether the twin is grammatical after all.
    """

    id: str
    sentence_id: str
    point_id: str
    kind: Literal["distractor", "twin"] = "distractor"
    applies: bool
    reason: str = ""
    model: str | None = None
    prompt_hash: str | None = None


def book_language(context: dict[str, Any]) -> str:
    """The book's language as the reader found it (its front matter or the build's option)."""
    return str(context.get("book", {}).get("language", "the language"))
