"""The grammar-book reader (Material Inspector) on books written for the tests."""

from __future__ import annotations

import shutil

import pytest

from gramagents.errors import InputError
from gramagents.recipes.grammar_book import reader as book_reader
from gramagents.recipes.grammar_book.atelier import (
    SectionOptions,
    WindowOptions,
    book_title,
    section_verdict,
    section_windows,
    split_sentences,
    vocabulary_for,
)
from gramagents.recipes.grammar_book.reader import read_grammar_book
from gramagents.sources import ReadOptions

from .grammar_books import MARKDOWN_BOOK, RUNNING_HEAD, TEXT_BOOK, write_pdf


@pytest.fixture
def no_ocr(monkeypatch):
    """As on a machine without Tesseract, whatever this one has."""
    monkeypatch.setattr(book_reader, "find_engine", lambda languages: (None, "not installed"))


def test_pdf_sections_come_from_font_sizes_with_their_pages(tmp_path, no_ocr):
    data = read_grammar_book(write_pdf(tmp_path / "book.pdf"), ReadOptions())
    assert [s.path for s in data.records] == [
        ["1 Phonology", "1.1 Vowels"],
        ["2 Morphology", "2.1 The definite article"],
        ["2 Morphology", "2.2 Plural of nouns"],
        ["3 Syntax", "3.1 Verb-second word order"],
    ]
    assert [s.pages for s in data.records] == [[1], [2], [3], [3, 4]]  # 3.1 runs onto page 4
    article = data.records[1]
    assert [b.kind for b in article.blocks] == ["text", "table", "text"]
    table = article.blocks[1]
    assert table.page == 2 and table.header == ["Case", "Masculine", "Feminine", "Neuter"]
    assert table.rows == [
        ["Nominative", "den Hond", "d'Kaz", "d'Kand"],
        ["Dative", "dem Hond", "der Kaz", "dem Kand"],
    ]
    text = " ".join(b.text for s in data.records for b in s.blocks)
    assert RUNNING_HEAD not in text and "Case" not in text  # running head; table cells apart
    assert not any(b.text.strip().isdigit() for s in data.records for b in s.blocks)
    assert data.stats == {
        "pages": 4, "ocr_pages": 0, "skipped_pages": 0, "paragraphs": 6, "tables": 1,
        "table_rows": 2, "sections": 4,
    }  # fmt: skip
    assert data.warnings == [] and data.info["skipped pages"] == "no"


def test_an_image_only_page_without_ocr_is_listed_as_skipped(tmp_path, no_ocr):
    book = write_pdf(tmp_path / "book.pdf", scanned_page=True)
    data = read_grammar_book(book, ReadOptions())
    assert data.stats["pages"] == 5 and data.stats["skipped_pages"] == 1
    assert data.info["skipped pages"] == "5" and data.info["OCR"] == "no"
    assert data.warnings == [
        f"{book}: page 5: image-only page skipped (no OCR engine: not installed)"
    ]
    assert len(data.records) == 4  # the rest of the book is read as before


@pytest.mark.skipif(
    shutil.which("tesseract") is None or not __import__("importlib").util.find_spec("pytesseract"),
    reason="Tesseract and pytesseract are not installed (apt-get install tesseract-ocr; "
    "pip install pytesseract)",
)
def test_an_image_only_page_is_recognised_when_tesseract_is_installed(tmp_path):
    data = read_grammar_book(write_pdf(tmp_path / "book.pdf", scanned_page=True), ReadOptions())
    assert data.stats["ocr_pages"] == 1 and data.stats["skipped_pages"] == 0
    questions = data.records[-1]
    assert questions.path == ["3 Syntax", "3.2 Questions"] and questions.pages == [5]
    assert questions.blocks[0].ocr and "finite verb comes first" in questions.blocks[0].text


def test_limit_reads_the_first_pages(tmp_path, no_ocr):
    data = read_grammar_book(write_pdf(tmp_path / "book.pdf"), ReadOptions(limit=2))
    assert data.stats["pages"] == 2 and [s.title for s in data.records] == [
        "1.1 Vowels", "2.1 The definite article",
    ]  # fmt: skip


def test_markdown_books_keep_pages_lines_tables_and_their_language(tmp_path):
    path = tmp_path / "book.md"
    path.write_text(MARKDOWN_BOOK, encoding="utf-8")
    data = read_grammar_book(path, ReadOptions(options={"language": "Klingon"}))
    assert data.context["book"]["language"] == "Luxembourgish"  # the front matter says so
    article, syntax = data.records[1], data.records[2]
    assert article.path[-2:] == ["2 Morphology", "2.1 The definite article"]
    assert [(b.kind, b.page, b.line) for b in article.blocks] == [("text", 1, 14), ("table", 1, 17)]
    assert article.blocks[1].rows == [["Nominative", "den Hond", "d'Kaz"],
                                      ["Dative", "dem Hond", "der Kaz"]]  # fmt: skip
    assert syntax.pages == [2]  # after the form feed


def test_a_markdown_book_with_windows_line_ends_keeps_its_front_matter(tmp_path):
    path = tmp_path / "book.md"
    path.write_bytes(MARKDOWN_BOOK.replace("\n", "\r\n").encode("utf-8"))
    data = read_grammar_book(path, ReadOptions(options={"language": "Klingon"}))
    assert data.context["book"]["language"] == "Luxembourgish"
    article = data.records[1]
    assert [(b.kind, b.page, b.line) for b in article.blocks] == [("text", 1, 14), ("table", 1, 17)]


def test_plain_text_books_find_numbered_and_capitalised_headings_and_tab_tables(tmp_path):
    path = tmp_path / "book.txt"
    path.write_text(TEXT_BOOK, encoding="utf-8")
    data = read_grammar_book(path, ReadOptions())
    assert [s.path for s in data.records] == [
        ["1 MORPHOLOGY", "1.1 Plural of nouns"],
        ["2 SYNTAX", "2.1 Verb-second word order"],
    ]
    word_order = data.records[1]
    assert [b.kind for b in word_order.blocks] == ["text", "table"]
    assert word_order.blocks[1].header == ["Case", "Masculine", "Feminine"]
    assert word_order.pages == [2]


@pytest.mark.parametrize(
    ("name", "content", "options", "words"),
    [
        ("book.pdf", b"%PDF-1.4 this is not really a pdf", {}, "cannot be read as a PDF"),
        ("book.txt", b"   \n", {}, "file is empty"),
        ("book.md", b"# Title\n", {"ocr": "sometimes"}, "source.options.ocr"),
        ("book.txt", b"\xff\xfe bad bytes", {}, "not valid UTF-8"),
    ],
)
def test_unreadable_books_are_one_line_naming_the_file(tmp_path, name, content, options, words):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_grammar_book(path, ReadOptions(options=options))
    assert words in str(caught.value) and str(path) in str(caught.value)


def test_the_section_filter_keeps_syntax_and_morphology(tmp_path, no_ocr):
    sections = read_grammar_book(write_pdf(tmp_path / "book.pdf"), ReadOptions()).records
    options = SectionOptions()
    vocabulary = vocabulary_for(options, "lb")
    verdicts = [section_verdict(s, options, vocabulary, book_title(sections)) for s in sections]
    assert book_title(sections) is None  # chapters are the top headings
    assert [(v.decision, v.reason) for v in verdicts] == [
        ("drop", "heading '1.1 Vowels' is under '1 Phonology', which names 'phonology'"),
        ("keep", "heading '2.1 The definite article' names 'article'"),
        ("keep", "heading '2.2 Plural of nouns' names 'plural'"),
        ("keep", "heading '3.1 Verb-second word order' names 'verb'"),
    ]


def test_windows_slide_over_sentences_and_give_each_table_row_its_context(tmp_path, no_ocr):
    sections = read_grammar_book(write_pdf(tmp_path / "book.pdf"), ReadOptions()).records
    windows = section_windows(sections[1], WindowOptions(window=2, stride=1, row_context=1))
    assert [(w.id, w.kind, w.sentences, w.pages) for w in windows] == [
        ("s2/w1", "text", (0, 2), [2]),
        ("s2/w2", "text", (1, 3), [2]),
        ("s2/t1/r1", "table-row", None, [2]),
        ("s2/t1/r2", "table-row", None, [2]),
    ]
    row = windows[2]
    assert row.row_text == "Case: Nominative; Masculine: den Hond; Feminine: d'Kaz; Neuter: d'Kand"
    # the sentence before the table and the one after it
    assert row.text.startswith("Masculine nouns take den") and row.text.endswith("no adjective.")
    v2 = section_windows(sections[3], WindowOptions(window=2, stride=1))
    assert [w.pages for w in v2] == [[3], [3, 4]]


def test_sentences_split_after_full_stops_but_not_after_abbreviations():
    assert split_sentences("Nouns, e.g. Hond, take den. Cf. p. 3 for more. Kënns du? Jo。好。") == [
        "Nouns, e.g. Hond, take den.", "Cf. p. 3 for more.", "Kënns du?", "Jo。", "好。",
    ]  # fmt: skip
