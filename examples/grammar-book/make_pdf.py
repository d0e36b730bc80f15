"""Make `book.pdf`, the example grammar book as a PDF, from `book.md`.

    .venv/bin/python examples/grammar-book/make_pdf.py [--out FILE] [--scanned PAGE]

The markdown is read with gramagents' own markdown reader, and each of its pages (the
stretches between form feeds) is set on one PDF page with PyMuPDF: headings in larger type
by level (the grammar-book reader finds them by font size), paragraphs in body type, tables
with ruled cells (the reader finds them by their lines), a running head and a page number.
The page given by `--scanned` (by default the last) is set the same way, then rasterised and
put on the PDF page as a picture only, as a scanned page is: it has no text layer, so the
reader recognises it with Tesseract when that is installed and lists it as skipped otherwise.

The PDF is made, not kept in the repository: it is a rendering of `book.md`, which stays the
one text to edit, and the same script makes the same file every time.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PAGE = (595, 842)  # A4 in points
MARGIN = 72
SIZES = {1: 20.0, 2: 16.0, 3: 13.0}
BODY = 11.0
CELL_WIDTH, CELL_HEIGHT = 110, 20
DPI = 150


def _text(page: Any, y: float, text: str, size: float) -> float:
    import pymupdf

    box = pymupdf.Rect(MARGIN, y, PAGE[0] - MARGIN, PAGE[1] - MARGIN)
    left = page.insert_textbox(box, text, fontsize=size, fontname="helv")
    if left < 0:
        raise SystemExit(f"make_pdf: a page of the book does not fit on one PDF page: {text[:40]}")
    return y + (box.height - left) + size * 0.8


def _table(page: Any, y: float, header: list[str], rows: list[list[str]]) -> float:
    import pymupdf

    for r, row in enumerate([header, *rows]):
        for c, cell in enumerate(row):
            rect = pymupdf.Rect(MARGIN + c * CELL_WIDTH, y + r * CELL_HEIGHT,
                                MARGIN + (c + 1) * CELL_WIDTH, y + (r + 1) * CELL_HEIGHT)  # fmt: skip
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_text((rect.x0 + 4, rect.y1 - 6), cell, fontsize=10, fontname="helv")
    return y + (len(rows) + 1) * CELL_HEIGHT + 18


def _set_page(page: Any, number: int, items: list[Any], head: str) -> None:
    from gramagents.recipes.grammar_book.outline import Heading, Paragraph

    page.insert_text((MARGIN, 40), head, fontsize=9, fontname="helv")
    page.insert_text((PAGE[0] / 2, PAGE[1] - 32), str(number), fontsize=9, fontname="helv")
    y = float(MARGIN)
    for item in items:
        if isinstance(item, Heading):
            y = _text(page, y, item.text, SIZES.get(item.level, SIZES[3]))
        elif isinstance(item, Paragraph):
            y = _text(page, y, item.text, BODY)
        else:
            y = _table(page, y, item.header, item.rows)


def _scanned(doc: Any, number: int, items: list[Any], head: str) -> None:
    """A page whose content is only a picture of the set page (grey, at 150 dpi)."""
    import pymupdf

    scratch = pymupdf.open()
    _set_page(scratch.new_page(width=PAGE[0], height=PAGE[1]), number, items, head)
    picture = scratch[0].get_pixmap(dpi=DPI, colorspace=pymupdf.csGRAY)
    page = doc.new_page(width=PAGE[0], height=PAGE[1])
    page.insert_image(page.rect, stream=picture.tobytes("png"))


def make_pdf(source: Path, out: Path, scanned: int | None = None) -> Path:
    """Set `source` (a markdown grammar book) as a PDF at `out`; page `scanned` as a picture."""
    import pymupdf

    from gramagents.recipes.grammar_book.text import read_markdown_or_text

    outline, meta, pages = read_markdown_or_text(source)
    head = str(meta.get("title") or source.stem)
    scanned = pages if scanned is None else scanned
    doc = pymupdf.open()
    for number in range(1, pages + 1):
        items = [item for item in outline.items if item.page == number]
        if number == scanned:
            _scanned(doc, number, items, head)
        else:
            _set_page(doc.new_page(width=PAGE[0], height=PAGE[1]), number, items, head)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc.save(out, garbage=3, deflate=True)
    return out


def main() -> None:
    """Parse the command line and write the PDF."""
    parser = argparse.ArgumentParser(description="Make the example grammar book's PDF.")
    parser.add_argument("--source", type=Path, default=HERE / "book.md")
    parser.add_argument("--out", type=Path, default=HERE / "book.pdf")
    parser.add_argument(
        "--scanned", type=int, default=None, help="page set as a picture only (default: last)"
    )
    args = parser.parse_args()
    print(make_pdf(args.source, args.out, args.scanned))


if __name__ == "__main__":
    main()
