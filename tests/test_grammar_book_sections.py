"""Which sections of a grammar book are read: heading word lists, the classifier, the report.

The book is written for the test: chapters headed "Grammatik" (Luxembourgish and German),
"Grammaire" (French) and "Conversation", a section "Agreeing with someone" and one headed only
"Agreement", and "Questions" both under the grammar and under the conversation.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from gramagents.models.scripted import ScriptedBackend
from gramagents.progress import LineProgress
from gramagents.recipes.grammar_book.atelier import (
    SectionOptions,
    book_title,
    section_verdict,
    vocabulary_for,
)
from gramagents.recipes.grammar_book.headings import Vocabulary, heading_verdict
from gramagents.recipes.grammar_book.reader import read_grammar_book
from gramagents.records import ChatRequest
from gramagents.sources import ReadOptions
from gramagents.workflow.build import BuildOptions, run_build

BOOK = """\
---
language: Luxembourgish
code: lb
---
# Mäi Lëtzebuergesch

## Virwuert

Dëst Buch ass fir Ufänger.

## 1 Grammatik

Luxembourgish marks case on the article, not on the noun.

### 1.1 Questions

In a yes-no question the finite verb comes first: Kënns du muer?

## 2 Grammaire

### 2.1 L'accord de l'adjectif

An attributive adjective takes the ending -en before a masculine noun: de grousse Mann.

## 3 Conversation

### 3.1 Agreeing with someone

Say Jo, dat stëmmt when you agree.

### 3.2 Questions

Wéi geet et? Ask it when you meet a friend.

## 4 Agreement

When two people agree, they shake hands and smile.
"""
EXPECTED = {
    "Virwuert": ("drop", "heading 'Virwuert' names 'virwuert'"),
    "1 Grammatik": ("keep", "heading '1 Grammatik' names 'grammatik'"),
    "1.1 Questions": (
        "keep",
        "'questions' in '1.1 Questions' is under the grammar heading '1 Grammatik' ('grammatik')",
    ),
    "2.1 L'accord de l'adjectif": ("keep", "heading '2.1 L'accord de l'adjectif' names 'adjectif'"),
    "3.1 Agreeing with someone": ("drop", "heading '3.1 Agreeing with someone' names 'agreeing'"),
    "3.2 Questions": (
        "drop",
        "heading '3.2 Questions' is under '3 Conversation', which names 'conversation'",
    ),
    "4 Agreement": (
        "undecided",
        "'agreement' in '4 Agreement' may or may not be grammar, and no heading above it "
        "names grammar",
    ),
}


@pytest.fixture
def book(tmp_path: Path) -> Path:
    path = tmp_path / "book.md"
    path.write_text(BOOK, encoding="utf-8")
    return path


def test_the_word_lists_keep_grammatik_and_drop_agreeing_with_someone(book):
    sections = read_grammar_book(book, ReadOptions()).records
    title = book_title(sections)
    assert title == "Mäi Lëtzebuergesch"  # above every section: it decides nothing
    options = SectionOptions()
    vocabulary = vocabulary_for(options, "lb")
    found = {s.title: section_verdict(s, options, vocabulary, title) for s in sections}
    assert {k: (v.decision, v.reason) for k, v in found.items()} == EXPECTED


def test_lists_of_one_language_alone_miss_the_others_headings():
    english = Vocabulary.of(["en"])
    assert heading_verdict(["Grammatik"], english).decision == "undecided"
    assert heading_verdict(["Grammar"], english).decision == "keep"
    german = Vocabulary.of(["de"])  # compounds: the last or first part of the word
    assert heading_verdict(["Modalverben"], german).decision == "keep"
    assert heading_verdict(["Pluralbildung"], german).decision == "keep"
    assert heading_verdict(["Wortschatz: Tiere"], german).decision == "drop"
    assert heading_verdict(["Fragen"], german).decision == "undecided"
    mine = Vocabulary.of(["en"], {"grammar": ["clitics"]})
    assert heading_verdict(["Clitics"], mine).reason == "heading 'Clitics' names 'clitics'"


RECIPE = """\
recipe: grammar-book-sections
source: {reader: grammar-book, options: {language: Luxembourgish, code: lb}}
seed: 7
agents: {model: smollm2, max_reasks: 1}
review: {kind: grammar-book, sample: 5}
nodes:
  - name: sections
    filter: book-sections
  - name: classify
    agent: section-classifier
    prompt: grammar-book/classify.md
    params: {temperature: 0.0, max_tokens: 48}
  - name: windows
    filter: book-windows
  - name: banks
    builder: grammar-book
    tasks: {GB-TASK4: {seeds: 3}}
"""


def classifier(request: ChatRequest) -> str:
    prompt = request.messages[-1].content
    assert "Headings: Mäi Lëtzebuergesch > 4 Agreement" in prompt  # the one undecided section
    assert "Opening: When two people agree" in prompt
    return json.dumps({"grammar": False, "reason": "It is about shaking hands, not grammar."})


ScriptedBackend.register("grammar-book-sections", classifier)


def test_the_classifier_decides_what_the_lists_leave_open_and_the_report_says_why(book, tmp_path):
    (tmp_path / "recipe.yaml").write_text(RECIPE, encoding="utf-8")
    lines = io.StringIO()
    progress = LineProgress(Console(file=lines, width=200))
    options = BuildOptions(source=book, agent_model="scripted:grammar-book-sections",
                           run_dir=tmp_path / "build")  # fmt: skip
    result = asyncio.run(run_build(str(tmp_path / "recipe.yaml"), options, progress))
    stages = result.manifest.stages
    assert stages["sections"] == {"before": 7, "kept": 3, "dropped": 3, "undecided": 1}
    assert stages["classify"] == {"planned": 1, "kept": 0, "dropped": 1, "failed": 0}
    assert stages["windows"]["sections"] == 3
    written = [json.loads(x) for x in result.folder.file("sections.jsonl").read_text().splitlines()]
    agreement = next(s for s in written if s["title"] == "4 Agreement")
    assert agreement["decision"] == "drop" and agreement["decided_by"] == "classifier"
    assert agreement["reason"].endswith("It is about shaking hands, not grammar.")
    report = result.folder.file("report.md").read_text(encoding="utf-8")
    assert "## Sections of the book" in report
    assert "| Mäi Lëtzebuergesch > 1 Grammatik | 1 | keep | words | heading '1 Grammatik'" in report
    assert "| 3.1 Agreeing with someone" not in report  # rows show the whole path
    assert "> 3.1 Agreeing with someone | 1 | drop | words |" in report
    assert "> 4 Agreement | 1 | drop | classifier |" in report
    said = lines.getvalue().splitlines()
    assert any(x.startswith("sections: before 7, kept 3, dropped 3, undecided 1 (") for x in said)
    assert any(x.startswith("classify: planned 1, kept 0, dropped 1, failed 0 (") for x in said)
