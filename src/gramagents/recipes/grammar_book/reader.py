"""The `grammar-book` source: a grammar book (PDF, markdown or plain text) read into sections.

This is the paper's Material Inspector (§3.2). Its options (the recipe's `source.options`)
name the book's language (the language the grammar describes) and how pages are read.
`--limit N` reads the first N pages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...api import InputError, ReadOptions, SourceData, source_reader
from .ocr import find_engine
from .outline import Outline, Paragraph, Table, sections
from .pdf import HeadingRule, read_pdf
from .text import read_markdown_or_text


class BookOptions(BaseModel):
    """How a grammar book is read."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    language: str = "Luxembourgish"
    """The language the book describes, as prompts name it (a markdown book's front matter
    `language:` overrides it)."""
    code: str = "lb"
    """Its language code (recorded with every grammar point, and choosing the section filter's
    heading lists; a markdown book's front matter `code:` overrides it)."""
    ocr: Literal["auto", "off"] = "auto"
    """`auto`: recognise image-only pages when Tesseract and pytesseract are installed."""
    ocr_languages: str = "eng"
    """Tesseract language codes joined by `+` (e.g. `eng+ltz`)."""
    dpi: int = Field(default=300, ge=72, le=600)
    """Resolution image-only pages are rendered at for OCR."""
    heading_ratio: float = Field(default=1.15, gt=1.0)
    """A PDF line set at least this many times the body size is a heading."""
    heading_max_words: int = Field(default=12, ge=1)


def _options(path: Path, raw: dict[str, Any]) -> BookOptions:
    try:
        return BookOptions.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "source.options." + ".".join(str(p) for p in error["loc"])
        raise InputError(path, f"recipe {where}: {error['msg']}") from None


def _tally(outline: Outline) -> dict[str, int]:
    tables = [i for i in outline.items if isinstance(i, Table)]
    return {
        "paragraphs": sum(isinstance(i, Paragraph) for i in outline.items),
        "tables": len(tables),
        "table_rows": sum(len(t.rows) for t in tables),
    }


@source_reader("grammar-book", unit="pages")
def read_grammar_book(path: Path, options: ReadOptions) -> SourceData:
    """Sections of a grammar book, with its pages' fate in the stats and the warnings."""
    book = _options(path, options.options)
    if path.is_dir():
        raise InputError(path, "is a folder; give one grammar book (.pdf, .md or .txt)")
    if not path.is_file():
        raise InputError(path, "file not found")
    warnings: list[str] = []
    info: dict[str, Any] = {"language": book.language}
    stats: dict[str, int] = {}
    if path.suffix.lower() == ".pdf":
        engine, why = find_engine(book.ocr_languages) if book.ocr == "auto" else (None, "off")
        rule = HeadingRule(book.heading_ratio, book.heading_max_words)
        read = read_pdf(path, rule, engine, book.dpi, options.limit)
        outline = read.outline
        stats = {"pages": read.pages, "ocr_pages": len(read.ocr_pages)}
        stats["skipped_pages"] = len(read.skipped_pages)
        info["pages"] = read.pages
        info["OCR"] = f"{why} ({book.ocr_languages})" if engine is not None else "no"
        info["skipped pages"] = ", ".join(map(str, read.skipped_pages)) or "no"
        if read.ocr_pages:
            info["OCR pages"] = ", ".join(map(str, read.ocr_pages))
        for page in read.skipped_pages:
            warnings.append(f"{path}: page {page}: image-only page skipped (no OCR engine: {why})")
    else:
        outline, meta, pages = read_markdown_or_text(path)
        if options.limit is not None:
            outline.items = [i for i in outline.items if i.page <= options.limit]
        named = {k: str(meta[k]) for k in ("language", "code") if meta.get(k) is not None}
        if named:
            book = book.model_copy(update=named)
            info["language"] = book.language
        stats = {"pages": min(pages, options.limit or pages)}
        info["pages"] = stats["pages"]
    stats.update(_tally(outline))
    found = sections(outline)
    stats["sections"] = len(found)
    if not found:
        raise InputError(path, "no text found in the book (is it a scan without OCR?)")
    return SourceData(
        records=list(found),
        context={"book": {"language": book.language, "code": book.code, "file": str(path)}},
        stats=stats,
        info=info,
        warnings=warnings,
    )
