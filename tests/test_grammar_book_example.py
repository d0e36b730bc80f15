"""The example grammar book (`examples/grammar-book/`), its PDF, recipe and translation set,
and translation sets in FLORES-200's layout."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

from gramagents.errors import InputError
from gramagents.recipes.grammar_book import reader as book_reader
from gramagents.recipes.grammar_book.atelier import (
    SectionOptions,
    book_title,
    section_verdict,
    vocabulary_for,
)
from gramagents.recipes.grammar_book.reader import read_grammar_book
from gramagents.recipes.grammar_book.sets import TranslationSet, read_set
from gramagents.sources import ReadOptions

from .conftest import ROOT

EXAMPLE = ROOT / "examples" / "grammar-book"


def _make_pdf():
    spec = importlib.util.spec_from_file_location("make_pdf", EXAMPLE / "make_pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_pdf


def _shape(records):
    return [
        (s.path, s.pages, [(b.kind, b.text, b.header, b.rows) for b in s.blocks]) for s in records
    ]


def test_the_pdf_is_the_markdown_book_with_a_table_and_a_scanned_last_page(tmp_path, monkeypatch):
    monkeypatch.setattr(book_reader, "find_engine", lambda languages: (None, "not installed"))
    pdf = _make_pdf()(EXAMPLE / "book.md", tmp_path / "book.pdf")
    from_pdf = read_grammar_book(pdf, ReadOptions())
    from_markdown = read_grammar_book(EXAMPLE / "book.md", ReadOptions())
    assert from_pdf.stats["pages"] == from_markdown.stats["pages"] == 3
    assert from_pdf.stats["skipped_pages"] == 1 and from_pdf.stats["tables"] == 1
    assert from_pdf.warnings == [f"{pdf}: page 3: image-only page skipped (no OCR engine: "
                                 "not installed)"]  # fmt: skip
    # pages 1-2 read the same from both (the PDF's running heads and page numbers dropped)
    shown = [s for s in from_markdown.records if s.pages != [3]]
    assert _shape(from_pdf.records) == _shape(shown)
    [table] = [b for s in from_pdf.records for b in s.blocks if b.kind == "table"]
    assert table.rows[1] == ["Dative", "dem Hond", "der Kaz", "dem Kand"]


def test_the_example_book_keeps_its_grammar_chapter_only():
    sections = read_grammar_book(EXAMPLE / "book.md", ReadOptions()).records
    options = SectionOptions()
    vocabulary = vocabulary_for(options, "lb")
    title = book_title(sections)
    kept = [s.title for s in sections
            if section_verdict(s, options, vocabulary, title).decision == "keep"]  # fmt: skip
    assert kept == ["2.1 Den Artikel (the definite article)", "2.2 Wuertstellung (word order)"]


def test_the_example_recipe_is_the_stock_recipe_with_a_set_and_fewer_calls():
    stock = yaml.safe_load((ROOT / "graphs" / "grammar-book.yaml").read_text(encoding="utf-8"))
    example = yaml.safe_load((EXAMPLE / "grammar-book.yaml").read_text(encoding="utf-8"))
    nodes = {n["name"]: n for n in example["nodes"]}
    sets = nodes["banks"]["tasks"]["GB-TRANSLATE"].pop("sets")
    smaller = {"extract": ("max_points", 1, 3), "generate": ("per_point", 1, 3),
               "distractors": ("candidates", 1, 2)}  # fmt: skip
    for name, (key, mine, theirs) in smaller.items():
        assert nodes[name]["options"][key] == mine
        nodes[name]["options"][key] = theirs
    assert example["agents"]["max_reasks"] == 0
    example["agents"]["max_reasks"] = stock["agents"]["max_reasks"]
    assert example == stock
    assert sets == [{"name": "EVERYDAY", "path": "examples/grammar-book/sets/everyday"}]
    pairs = read_set(TranslationSet(name="EVERYDAY", path=str(ROOT / sets[0]["path"])))
    assert len(pairs.english) == len(pairs.target) == 6
    assert pairs.target[5] == "Wou ass d'Gare?"


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def test_flores_101_names_and_the_dev_split_are_read(tmp_path):
    files = {"dev/eng.dev": "One.\nTwo.\n", "dev/ltz.dev": "Eent.\nZwee.\n",
             "devtest/eng.devtest": "Three.\n", "devtest/ltz.devtest": "Dräi.\n"}  # fmt: skip
    root = _write(tmp_path / "flores101_dataset", files)
    dev = read_set(TranslationSet(name="F101", path=str(root), split="dev"))
    assert (dev.english, dev.target) == (["One.", "Two."], ["Eent.", "Zwee."])
    devtest = read_set(TranslationSet(name="F101", path=str(root / "devtest"), size=1))
    assert devtest.target == ["Dräi."] and devtest.files[1].endswith("ltz.devtest")


@pytest.mark.parametrize(
    ("files", "spec", "words"),
    [
        ({"devtest/eng_Latn.devtest": "A.\nB.\n", "devtest/ltz_Latn.devtest": "A.\n"}, {},
         "ltz_Latn.devtest: 1 sentences, but eng_Latn.devtest has 2"),
        ({"devtest/eng_Latn.devtest": "A.\n\nB.\n", "devtest/ltz_Latn.devtest": "A.\nB.\nC.\n"},
         {}, "eng_Latn.devtest:2: an empty line"),
        ({"devtest/eng_Latn.devtest": "A.\n", "devtest/ltz_Latn.devtest": "A.\n",
          "devtest/fra_Latn.devtest": "A.\n"}, {}, "name the book's language with `target`"),
        ({"devtest/eng_Latn.devtest": "A.\n"}, {"target": "ltz_Latn"},
         "ltz_Latn.devtest: translation set S: file not found"),
    ],
)  # fmt: skip
def test_a_set_that_cannot_be_read_is_one_line_naming_the_file(tmp_path, files, spec, words):
    root = _write(tmp_path / "set", files)
    with pytest.raises(InputError) as caught:
        read_set(TranslationSet(name="S", path=str(root), **spec))
    assert words in str(caught.value) and "\n" not in str(caught.value)
