"""Material Inspector for PDFs (paper §3.2): text by chapter from font sizes, tables as rows.

PyMuPDF reads each page's text lines with their font sizes and locates its tables
(`find_tables`, ruled or aligned), whose cells are read back as text. Lines inside a table
belong to the table only. Running heads and page numbers (the same line at the top or the
bottom of most pages, or a bare number there) are dropped. The body size is the size most
characters are set in; short lines set clearly larger are headings, the largest size being
level 1. An image-only page (no text layer, a picture) is recognised by OCR when an engine is
installed (`ocr.py`) and otherwise listed as skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api import InputError, require
from .ocr import OcrEngine
from .outline import Heading, Outline, Paragraph, Table
from .text import plain_heading

MARGIN = 0.08
"""Share of the page height at the top and bottom where running heads and numbers sit."""
_PAGE_NUMBER = re.compile(r"^[-–—\s]*(\d{1,4}|[ivxlcdm]{1,6})[-–—\s]*$", re.IGNORECASE)


@dataclass
class Line:
    """A line of text on a page."""

    page: int
    y0: float
    y1: float
    block: int
    size: float
    text: str
    edge: bool
    """In the top or bottom margin of the page."""


@dataclass
class PageScan:
    """What a page holds, in reading order."""

    number: int
    lines: list[Line] = field(default_factory=list)
    tables: list[tuple[float, list[str], list[list[str]]]] = field(default_factory=list)
    """(top, header, rows) of each table."""
    image_only: bool = False
    ocr: list[str] | None = None


def open_pdf(path: Path) -> Any:
    """The PDF opened with PyMuPDF, or one error line saying why it cannot be read."""
    require("grammar-book", "grammar-book")
    import pymupdf

    quiet = getattr(pymupdf, "no_recommend_layout", None)
    if quiet is not None:  # it would print an advertisement on stdout at the first table search
        quiet()
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # noqa: BLE001 - PyMuPDF raises its own types for bad files
        raise InputError(path, f"cannot be read as a PDF ({exc})") from None
    if doc.needs_pass:
        raise InputError(path, "the PDF is encrypted; give an unencrypted copy")
    return doc


def _cell(page: Any, rect: Any) -> str:
    import pymupdf

    if rect is None:
        return ""
    return " ".join(page.get_textbox(pymupdf.Rect(rect)).split())


def _tables(page: Any) -> list[tuple[Any, list[str], list[list[str]]]]:
    found: list[tuple[Any, list[str], list[list[str]]]] = []
    if not page.get_drawings():  # tables are found by their ruling lines: none here
        return found
    for table in page.find_tables().tables:
        rows = [[_cell(page, c) for c in row.cells] for row in table.rows]
        rows = [r for r in rows if any(r)]
        if len(rows) < 2:
            continue
        if table.header.external:
            header = [" ".join(str(n or "").split()) for n in table.header.names]
        else:
            header, rows = rows[0], rows[1:]
        found.append((table.bbox, header, rows))
    return found


def _inside(bbox: tuple[float, float, float, float], boxes: list[Any]) -> bool:
    x = (bbox[0] + bbox[2]) / 2
    y = (bbox[1] + bbox[3]) / 2
    return any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in boxes)


def scan_page(page: Any, number: int) -> PageScan:
    """The lines (outside tables) and the tables of one page."""
    scan = PageScan(number)
    tables = _tables(page)
    boxes = [bbox for bbox, _, _ in tables]
    height = page.rect.height or 1.0
    content = page.get_text("dict", sort=True)
    for block_no, block in enumerate(content["blocks"]):
        if block.get("type") != 0:
            continue
        for line in block["lines"]:
            text = "".join(s["text"] for s in line["spans"]).strip()
            if not text or _inside(line["bbox"], boxes):
                continue
            sizes: Counter[float] = Counter()
            for span in line["spans"]:
                sizes[round(span["size"] * 2) / 2] += len(span["text"].strip())
            y0, y1 = line["bbox"][1], line["bbox"][3]
            edge = y1 < height * MARGIN or y0 > height * (1 - MARGIN)
            size = sizes.most_common(1)[0][0]
            scan.lines.append(Line(number, y0, y1, block_no, size, text, edge))
    scan.tables = [(bbox[1], header, rows) for bbox, header, rows in tables]
    if not scan.lines and not scan.tables and page.get_images():
        scan.image_only = True
    return scan


def drop_running_lines(scans: list[PageScan]) -> None:
    """Remove page numbers and running heads (lines repeated in the margins of most pages)."""
    pages = len(scans)
    repeated: Counter[str] = Counter()
    for scan in scans:
        repeated.update({_shape(line.text) for line in scan.lines if line.edge})
    running = {t for t, n in repeated.items() if n >= max(2, pages // 2)}
    for scan in scans:
        scan.lines = [
            line
            for line in scan.lines
            if not (line.edge and (_PAGE_NUMBER.match(line.text) or _shape(line.text) in running))
        ]


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.split()).casefold())


@dataclass(frozen=True)
class HeadingRule:
    """Font-size heuristics for headings."""

    ratio: float = 1.15
    """A heading is set at least this many times the body size."""
    max_words: int = 12


def heading_levels(scans: list[PageScan], rule: HeadingRule) -> tuple[float, dict[float, int]]:
    """The body size, and the level (1 = largest) of each size headings are set in."""
    weight: Counter[float] = Counter()
    for scan in scans:
        for line in scan.lines:
            weight[line.size] += len(line.text)
    if not weight:
        return 0.0, {}
    body = weight.most_common(1)[0][0]
    sizes = sorted(
        {
            line.size
            for scan in scans
            for line in scan.lines
            if line.size >= body * rule.ratio and len(line.text.split()) <= rule.max_words
        },
        reverse=True,
    )
    return body, {size: min(index + 1, 4) for index, size in enumerate(sizes)}


def _dehyphenated(parts: list[str]) -> str:
    text = ""
    for part in parts:
        if re.search(r"\w-$", text) and part[:1].islower():
            text = text[:-1] + part
        else:
            text = f"{text} {part}" if text else part
    return text


def outline_pdf(scans: list[PageScan], rule: HeadingRule) -> Outline:
    """Headings, paragraphs and tables of the whole book, in reading order."""
    _, levels = heading_levels(scans, rule)
    outline = Outline()
    for scan in scans:
        if scan.ocr is not None:  # no font sizes: headings as a plain-text book has them
            for text in scan.ocr:
                level = plain_heading(text, None, None)
                if level:
                    outline.items.append(Heading(scan.number, level, text))
                else:
                    outline.items.append(Paragraph(scan.number, text, ocr=True))
            continue
        _outline_page(scan, levels, rule, outline)
    return outline


def _outline_page(
    scan: PageScan, levels: dict[float, int], rule: HeadingRule, outline: Outline
) -> None:
    entries: list[tuple[float, int, Line | Table]] = [(line.y0, 0, line) for line in scan.lines]
    entries += [(top, 1, Table(scan.number, header, rows)) for top, header, rows in scan.tables]
    entries.sort(key=lambda e: (e[0], e[1]))
    pending: list[Line] = []
    previous: Line | Table | None = None

    def flush() -> None:
        if pending:
            outline.add_paragraph(scan.number, _dehyphenated([x.text for x in pending]))
            pending.clear()

    for _, _, entry in entries:
        if isinstance(entry, Table):
            flush()
            outline.items.append(entry)
        elif entry.size in levels and len(entry.text.split()) <= rule.max_words:
            flush()
            last = outline.items[-1] if outline.items else None
            continued = isinstance(previous, Line) and isinstance(last, Heading)
            if continued and (previous.block, previous.size) == (entry.block, entry.size):
                last.text += " " + entry.text  # a heading set on two lines
            else:
                outline.items.append(Heading(scan.number, levels[entry.size], entry.text))
        else:
            if pending and pending[-1].block != entry.block:
                flush()
            pending.append(entry)
        previous = entry
    flush()


@dataclass
class PdfRead:
    """A PDF's outline and what happened to its pages."""

    outline: Outline
    pages: int
    ocr_pages: list[int]
    skipped_pages: list[int]
    """Image-only pages that were not recognised (no OCR engine)."""


def read_pdf(
    path: Path, rule: HeadingRule, engine: OcrEngine | None, dpi: int, limit: int | None
) -> PdfRead:
    """Read the first `limit` pages (all by default) of a PDF into an outline."""
    doc = open_pdf(path)
    try:
        scans = []
        ocr_pages, skipped = [], []
        for index in range(min(len(doc), limit or len(doc))):
            page = doc[index]
            scan = scan_page(page, index + 1)
            if scan.image_only:
                if engine is None:
                    skipped.append(scan.number)
                else:
                    scan.ocr = engine.read(page, dpi)
                    ocr_pages.append(scan.number)
            scans.append(scan)
        pages = len(scans)
    finally:
        doc.close()
    drop_running_lines([s for s in scans if s.ocr is None])
    return PdfRead(
        outline=outline_pdf(scans, rule),
        pages=pages,
        ocr_pages=ocr_pages,
        skipped_pages=skipped,
    )
