"""Small grammar books written for the tests: a PDF made with PyMuPDF, and text and markdown.

The PDF has a running head and page numbers on every page, chapters and sections by font
size, prose rules, a table drawn with ruled lines, a chapter the section filter drops
(phonology), a section that runs over a page break, and optionally an image-only page (a
scanned page: the page's text as a picture, no text layer).
"""

from __future__ import annotations

from pathlib import Path

RUNNING_HEAD = "A Short Grammar of Luxembourgish"

# (kind, text): kind is "chapter", "section", "text" or "table"
PAGES: list[list[tuple[str, object]]] = [
    [
        ("chapter", "1 Phonology"),
        ("section", "1.1 Vowels"),
        ("text", "Luxembourgish has long and short vowels. Long vowels are written double."),
    ],
    [
        ("chapter", "2 Morphology"),
        ("section", "2.1 The definite article"),
        (
            "text",
            "The definite article agrees with the noun in gender and case. Masculine nouns "
            "take den in the nominative and the accusative, and dem in the dative.",
        ),
        (
            "table",
            [
                ["Case", "Masculine", "Feminine", "Neuter"],
                ["Nominative", "den Hond", "d'Kaz", "d'Kand"],
                ["Dative", "dem Hond", "der Kaz", "dem Kand"],
            ],
        ),
        ("text", "The forms of the table are used before nouns with no adjective."),
    ],
    [
        ("section", "2.2 Plural of nouns"),
        (
            "text",
            "Many nouns form their plural with the ending -en. For example, Stuff becomes "
            "Stuffen. Some nouns change their vowel instead.",
        ),
        ("chapter", "3 Syntax"),
        ("section", "3.1 Verb-second word order"),
        (
            "text",
            "In main clauses the finite verb stands in second position. When an adverb "
            "comes first, the subject follows the verb: Muer ginn ech an d'Schoul.",
        ),
    ],
    [
        (
            "text",
            "In subordinate clauses the finite verb goes to the end of the clause: Ech weess, "
            "datt hatt muer kënnt.",
        ),
    ],
]
SCANNED_TEXT = [
    "3.2 Questions",
    "In yes-no questions the finite verb comes first.",
    "Kënns du muer?",
]

SIZES = {"chapter": 18, "section": 14, "text": 11}


def _write_text(page, y: float, text: str, size: float) -> float:
    import pymupdf

    box = pymupdf.Rect(72, y, 523, y + 400)
    left = page.insert_textbox(box, text, fontsize=size, fontname="helv")
    used = 400 - left if left >= 0 else 400
    return y + used + size * 0.8


def _write_table(page, y: float, rows: list[list[str]]) -> float:
    import pymupdf

    width, height = 110, 20
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            rect = pymupdf.Rect(72 + c * width, y + r * height, 72 + (c + 1) * width,
                                y + (r + 1) * height)  # fmt: skip
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_text((rect.x0 + 4, rect.y1 - 6), cell, fontsize=10, fontname="helv")
    return y + len(rows) * height + 18


def write_pdf(path: Path, scanned_page: bool = False) -> Path:
    """The test book as a PDF (with an image-only page 5 when `scanned_page`)."""
    import pymupdf

    doc = pymupdf.open()
    for number, blocks in enumerate(PAGES, start=1):
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 40), RUNNING_HEAD, fontsize=9, fontname="helv")
        page.insert_text((290, 810), str(number), fontsize=9, fontname="helv")
        y = 72.0
        for kind, content in blocks:
            if kind == "table":
                y = _write_table(page, y, content)  # type: ignore[arg-type]
            else:
                y = _write_text(page, y, str(content), SIZES[kind])
    if scanned_page:
        _add_scanned_page(doc)
    doc.save(path, garbage=3, deflate=True)
    return path


def _add_scanned_page(doc) -> None:
    """A page whose text is only a picture (a grey PNG rendered from a text page at 150 dpi)."""
    import pymupdf

    scratch = pymupdf.open()
    source = scratch.new_page(width=595, height=842)
    y = 72.0
    for line, size in zip(SCANNED_TEXT, (14, 11, 11), strict=True):
        y = _write_text(source, y, line, size)
    picture = source.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY)
    page = doc.new_page(width=595, height=842)
    page.insert_image(page.rect, stream=picture.tobytes("png"))


MARKDOWN_BOOK = """\
---
language: Luxembourgish
---
# A Short Grammar of Luxembourgish

## 1 Phonology

Luxembourgish has long and short vowels.

## 2 Morphology

### 2.1 The definite article

The definite article agrees with the noun in gender and case. Masculine nouns take den in the
nominative and the accusative, and dem in the dative.

| Case | Masculine | Feminine |
|------|-----------|----------|
| Nominative | den Hond | d'Kaz |
| Dative | dem Hond | der Kaz |

\f
## 3 Syntax

### 3.1 Verb-second word order

In main clauses the finite verb stands in second position: Muer ginn ech an d'Schoul.
"""

TEXT_BOOK = """\
A SHORT GRAMMAR OF LUXEMBOURGISH

1 MORPHOLOGY

1.1 Plural of nouns

Many nouns form their plural with the ending -en. For example, Stuff becomes Stuffen.
\f
2 SYNTAX

2.1 Verb-second word order

In main clauses the finite verb stands in second position.
Case\tMasculine\tFeminine
Nominative\tden Hond\td'Kaz
Dative\tdem Hond\tder Kaz
"""
