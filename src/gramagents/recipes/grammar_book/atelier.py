"""Phrasing Atelier filters (paper §3.2): keep the syntax and morphology sections, cut windows.

- `book-sections`: keeps a section when its path of headings names one of the `keep` topics
  and none of the `drop` ones (case-insensitive, whole words). The paper keeps the sections
  on syntax and morphology; the lists are the recipe's to change. A dropped section goes to
  `failures.jsonl` with the reason.
- `book-windows`: slides a window of `window` sentences (every `stride` sentences) over each
  kept section's text, and makes one window per table row with `row_context` sentences of
  the text before and after its table, so that the extractor reads every row with what the
  book says around it. Sentences come from NLTK's Punkt splitter (untrained, with the
  abbreviations grammar books use), so any language written with full stops works.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...workflow.nodes import BuildView, FilterSpec, NodeEnv, NodeUpdate, filter_node
from .records import BookSection, BookWindow

KEEP = [
    "syntax",
    "morphology",
    "morphosyntax",
    "word order",
    "sentence",
    "clause",
    "noun",
    "nouns",
    "verb",
    "verbs",
    "adjective",
    "adjectives",
    "adverb",
    "adverbs",
    "article",
    "articles",
    "pronoun",
    "pronouns",
    "preposition",
    "prepositions",
    "case",
    "cases",
    "plural",
    "gender",
    "tense",
    "tenses",
    "mood",
    "agreement",
    "inflection",
    "declension",
    "conjugation",
    "negation",
    "question",
    "questions",
    "conjunction",
    "conjunctions",
    "particle",
    "particles",
    "numeral",
    "numerals",
    "word formation",
]
DROP = [
    "phonology",
    "phonetics",
    "pronunciation",
    "orthography",
    "spelling",
    "lexicon",
    "vocabulary",
    "glossary",
    "preface",
    "foreword",
    "acknowledgements",
    "bibliography",
    "references",
    "index",
    "contents",
    "abbreviations",
]
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
    """Which sections the extractor reads."""

    keep: list[str] = Field(default_factory=lambda: list(KEEP))
    """Topics (words or phrases) a kept section's headings name."""
    drop: list[str] = Field(default_factory=lambda: list(DROP))
    """Topics that drop a section even when it names a kept one (checked first)."""
    front_matter: bool = False
    """Keep the text before the first heading."""


def _pattern(topics: list[str]) -> re.Pattern[str] | None:
    if not topics:
        return None
    words = "|".join(re.escape(t.strip().casefold()) for t in topics if t.strip())
    return re.compile(rf"(?<!\w)(?:{words})(?!\w)") if words else None


def section_verdict(section: BookSection, options: SectionOptions) -> str | None:
    """Why a section is dropped, or None when it is kept."""
    if section.level == 0 and not options.front_matter:
        return "text before the first heading"
    headings = [h.casefold() for h in section.path]
    drop, keep = _pattern(options.drop), _pattern(options.keep)
    for heading in headings:
        if drop is not None and (found := drop.search(heading)):
            return f"heading '{heading}' names a dropped topic ({found.group(0)})"
    if keep is None or not any(keep.search(h) for h in headings):
        return "no heading names a kept topic (syntax, morphology, ...)"
    return None


async def filter_sections(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Keep the sections on the kept topics."""
    found = view.of_type(BookSection)
    removed, failures = [], []
    for section in found:
        reason = section_verdict(section, options)
        if reason is not None:
            removed.append(section.id)
            failures.append(
                {
                    "id": section.id,
                    "section": " > ".join(section.path),
                    "pages": section.pages,
                    "reason": reason,
                }
            )
    counts = {"before": len(found), "kept": len(found) - len(removed), "removed": len(removed)}
    return NodeUpdate(removed=removed, failures=failures, counts=counts)


filter_node(
    FilterSpec(
        name="book-sections",
        run=filter_sections,
        options=SectionOptions,
        description="Keep the sections on syntax and morphology (paper §3.2).",
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
    for section in view.of_type(BookSection):
        made += section_windows(section, options)
    text = sum(w.kind == "text" for w in made)
    return NodeUpdate(
        records=list(made),
        counts={
            "sections": len(view.of_type(BookSection)),
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
