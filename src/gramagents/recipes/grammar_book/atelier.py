"""Phrasing Atelier filters (paper §3.2): decide the grammar sections, cut windows.

- `book-sections`: decides every section by its headings with the word lists of `headings.py`
  (the book's language, English, French and German, plus the recipe's own terms): `keep`
  (a grammar heading decides), `drop` (pronunciation, vocabulary, conversation, front matter,
  ...) or `undecided` (no heading says, or only an ambiguous word such as "Agreement"). Each
  section keeps its decision and the reason in `sections.jsonl`; a dropped one also goes to
  `failures.jsonl`. Undecided sections are for the heading classifier agent (`classify.py`,
  with agents on); otherwise they are not read.
- `book-windows`: slides a window of `window` sentences (every `stride` sentences) over each
  kept section's text, and makes one window per table row with `row_context` sentences of
  the text before and after its table, so that the extractor reads every row with what the
  book says around it. Sentences come from NLTK's Punkt splitter (untrained, with the
  abbreviations grammar books use), so any language written with full stops works.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...api import BuildView, FilterSpec, NodeEnv, NodeUpdate, filter_node, require
from .headings import HeadingVerdict, Vocabulary, heading_verdict
from .records import BookSection, BookWindow

ABBREVIATIONS = {
    "e.g",
    "i.e",
    "cf",
    "etc",
    "vs",
    "viz",
    "p",
    "pp",
    "ch",
    "chap",
    "sec",
    "fig",
    "lit",
    "sg",
    "pl",
    "masc",
    "fem",
    "neut",
    "nom",
    "acc",
    "dat",
    "gen",
    "inf",
    "pres",
    "pret",
    "ptcp",
    "aux",
    "obj",
    "subj",
    "z.b",
    "bzw",
    "usw",
    "d.h",
    "vgl",
}


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class SectionOptions(_Options):
    """Which sections the extractor reads (`headings.py` holds the word lists)."""

    languages: list[str] | None = None
    """Language codes whose heading lists are read (None: the book's language, English,
    French and German)."""
    keep: list[str] = Field(default_factory=list)
    """More grammar terms (whole words) that keep a section."""
    drop: list[str] = Field(default_factory=list)
    """More terms that drop a section (read before the grammar terms)."""
    ambiguous: list[str] = Field(default_factory=list)
    """More terms that name grammar only under a grammar heading."""
    front_matter: bool = False
    """Keep the text before the first heading (or directly under the book's title)."""


def book_title(found: list[BookSection]) -> str | None:
    """The heading above every section (the book's title), if there is one."""
    paths = [s.path for s in found if s.level > 0]
    if not paths or not any(len(p) > 1 for p in paths):
        return None
    first = paths[0][0]
    return first if all(p[0] == first for p in paths) else None


def vocabulary_for(options: SectionOptions, code: str) -> Vocabulary:
    """The heading lists of the book's language and English, French and German."""
    languages = options.languages or [code, "en", "fr", "de"]
    extra = {"grammar": options.keep, "drop": options.drop, "ambiguous": options.ambiguous}
    return Vocabulary.of(languages, extra)  # type: ignore[arg-type]


def section_verdict(
    section: BookSection, options: SectionOptions, vocabulary: Vocabulary, title: str | None
) -> HeadingVerdict:
    """What the word lists say of a section (its headings below the book's title)."""
    path = section.path[1:] if title is not None and section.path[:1] == [title] else section.path
    if section.level == 0 or not path:
        if options.front_matter:
            return HeadingVerdict("keep", "text before the first heading (front_matter: true)")
        return HeadingVerdict("drop", "text before the first heading or under the book's title")
    return heading_verdict(path, vocabulary)


async def filter_sections(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Decide every section by its headings; the extractor reads the kept ones."""
    found = view.of_type(BookSection)
    vocabulary = vocabulary_for(options, str(view.context.get("book", {}).get("code", "")))
    title = book_title(found)
    decided, failures = [], []
    for section in found:
        verdict = section_verdict(section, options, vocabulary, title)
        by = "front matter" if section.level == 0 or section.path == [title] else "words"
        decided.append(
            section.model_copy(
                update={"decision": verdict.decision, "reason": verdict.reason, "decided_by": by}
            )
        )
        if verdict.decision == "drop":
            failures.append(
                {
                    "id": section.id,
                    "section": " > ".join(section.path),
                    "pages": section.pages,
                    "reason": verdict.reason,
                }
            )
    tally = Counter(s.decision for s in decided)
    counts = {"before": len(found), "kept": tally["keep"], "dropped": tally["drop"],
              "undecided": tally["undecided"]}  # fmt: skip
    return NodeUpdate(records=list(decided), failures=failures, counts=counts)


filter_node(
    FilterSpec(
        name="book-sections",
        run=filter_sections,
        options=SectionOptions,
        description="Decide which sections are on grammar, by their headings (paper §3.2).",
    )
)


class WindowOptions(_Options):
    """How the text is cut for the extractor."""

    window: int = Field(default=4, ge=1)
    """Sentences per window of running text."""
    stride: int = Field(default=2, ge=1)
    """Sentences between the starts of two windows (less than `window`: they overlap)."""
    row_context: int = Field(default=2, ge=0)
    """Sentences before and after a table given with each of its rows."""

    @model_validator(mode="after")
    def _no_gaps(self) -> WindowOptions:
        if self.stride > self.window:
            raise ValueError("stride must not exceed window (sentences would be skipped)")
        return self


@lru_cache(maxsize=1)
def _splitter() -> Any:
    require("grammar-book", "grammar-book")
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    parameters = PunktParameters()
    parameters.abbrev_types = set(ABBREVIATIONS)
    return PunktSentenceTokenizer(parameters)


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph (also after CJK full stops)."""
    parts = []
    for chunk in re.split(r"(?<=[。！？])", text):
        parts += [s.strip() for s in _splitter().tokenize(chunk) if s.strip()]
    return parts


def _spans(count: int, window: int, stride: int) -> list[tuple[int, int]]:
    if count == 0:
        return []
    starts = list(range(0, max(count - window, 0) + 1, stride))
    if starts[-1] + window < count:
        starts.append(count - window)
    return [(s, min(s + window, count)) for s in starts]


def _row_text(header: list[str], row: list[str]) -> str:
    return "; ".join(f"{h}: {c}" if h else c for h, c in zip(header, row, strict=True) if c)


def section_windows(section: BookSection, options: WindowOptions) -> list[BookWindow]:
    """The text windows and the table-row windows of one section."""
    sentences: list[tuple[str, int]] = []
    tables: list[tuple[int, Any]] = []  # (sentences before the table, block)
    for block in section.blocks:
        if block.kind == "table":
            tables.append((len(sentences), block))
        else:
            sentences += [(s, block.page) for s in split_sentences(block.text)]
    where = " > ".join(section.path)
    windows = []
    for n, (start, end) in enumerate(_spans(len(sentences), options.window, options.stride)):
        chosen = sentences[start:end]
        windows.append(
            BookWindow(
                id=f"{section.id}/w{n + 1}",
                section_id=section.id,
                section=where,
                kind="text",
                text=" ".join(s for s, _ in chosen),
                pages=sorted({p for _, p in chosen}),
                sentences=(start, end),
            )
        )
    for t, (at, table) in enumerate(tables):
        around = sentences[max(0, at - options.row_context) : at + options.row_context]
        for r, row in enumerate(table.rows):
            windows.append(
                BookWindow(
                    id=f"{section.id}/t{t + 1}/r{r + 1}",
                    section_id=section.id,
                    section=where,
                    kind="table-row",
                    text=" ".join(s for s, _ in around),
                    header=table.header,
                    row=row,
                    row_text=_row_text(table.header, row),
                    pages=sorted({table.page, *(p for _, p in around)}),
                    table_page=table.page,
                )
            )
    return windows


async def make_windows(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Windows over every kept section."""
    made: list[BookWindow] = []
    read = [s for s in view.of_type(BookSection) if s.decision in (None, "keep")]
    for section in read:
        made += section_windows(section, options)
    text = sum(w.kind == "text" for w in made)
    return NodeUpdate(
        records=list(made),
        counts={
            "sections": len(read),
            "text_windows": text,
            "table_rows": len(made) - text,
        },
    )


filter_node(
    FilterSpec(
        name="book-windows",
        run=make_windows,
        options=WindowOptions,
        description="Sentence windows and table rows with their context (paper §3.2).",
    )
)
