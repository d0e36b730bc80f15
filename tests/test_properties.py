"""Property tests: whatever bytes a reader is given and whatever text a model answers, the
readers and the answer-extraction chains raise nothing but the project's own errors."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gramagents.errors import GramagentsError
from gramagents.judging.agreement import read_human_scores
from gramagents.plugins import load_recipes
from gramagents.recipes.cpg.released import read_released
from gramagents.recipes.cpg.table import read_grammar_table
from gramagents.recipes.gec.items import read_grammar_items
from gramagents.recipes.gec.m2 import read_m2_file
from gramagents.recipes.pairs.climp import read_climp
from gramagents.recipes.pairs.reader import read_blimp
from gramagents.scoring.extract import Extraction, extract, known_chains
from gramagents.sources.datasets import read_dataset

QUICK = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces real files are made of, so that generated files get past the first check often.
FRAGMENTS = [
    '{"id": "1", "category": "c", "level": 1, "name": "n", "examples": ["x"]}',
    '{"id": "a", "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {"text": "t"}}}',
    '{"sentence_good": "A b.", "sentence_bad": "A c.", "UID": "u", "pairID": "0"}',
    '{"id": "G1", "level": "A1", "name": "n", "pairs": [{"ungrammatical": "a", "correction": "b"}]'
    "}",
    "id,category,level,name,description,sentence,kind",
    "E1,c,A1,n,d,She can swim.,example",
    "sentence,label",
    "我买了一本书。,1",
    "item_id,rater,score",
    "item-1,a,80",
    "id,question",
    "1,请判断下面的句子",
    "S I is here .",
    "A 1 2|||R:VERB|||am|||REQUIRED|||-NONE-|||0",
    "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0",
    '{"id": "a", "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {"t": "\\ud800"}}}',
    '{"id": "1", "name": "\\udfff", "category": "c", "level": 1}',
    '{"id": "a", "meta": ' + "[" * 300 + "]" * 300 + "}",
    "[" * 300,
    "",
    "\ufeff",
    "{",
    '"',
    ",,,",
]
LINES = st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40))
CONTENT = st.one_of(
    st.lists(LINES, max_size=8).map(lambda lines: "\n".join(lines).encode("utf-8")),
    st.binary(max_size=300),
)

READERS = [
    ("table.jsonl", read_grammar_table),
    ("table.csv", read_grammar_table),
    ("items.jsonl", read_grammar_items),
    ("dataset.jsonl", read_dataset),
    ("pairs.jsonl", read_blimp),
    ("pairs.csv", read_climp),
    ("1-1-SINGLE-T.csv", read_released),
    ("humans.csv", read_human_scores),
    ("hyp.m2", read_m2_file),
]


@QUICK
@given(content=CONTENT, reader=st.sampled_from(READERS))
@example(content=b"0\r0", reader=("pairs.csv", read_climp))  # a lone CR ends a line
@example(content=b"a," + b"x" * 140_000, reader=("pairs.csv", read_climp))  # over csv's limit
def test_readers_raise_only_the_projects_errors(content, reader):
    name, read = reader
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            read(path)
        except GramagentsError as exc:
            assert "\n" not in str(exc).strip()  # one line
            assert name in str(exc) or folder in str(exc)


load_recipes()
META_SHAPES = [
    {},
    {"options": {"A": "x", "B": "y", "C": "z", "D": "w"}},  # EduEval: letter to text
    {"options": [{"key": "A", "text": "x"}, {"key": "1001", "text": "y"}]},  # CPG banks
    {"options": ["x", "y", "z"]},  # syntax questions
    {"options": []},
]


def shapes_of(chain: str) -> list[dict]:
    """The item metadata shapes `chain` is written for (those it reads a plain answer with)."""
    fitting = []
    for meta in META_SHAPES:
        try:
            extract(chain, "A", meta)
        except (TypeError, KeyError, AttributeError):
            continue
        fitting.append(meta)
    return fitting


CASES = [(chain, meta) for chain in known_chains() for meta in shapes_of(chain)]
ANSWERS = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["答案：T", "T", "F", "B", "答案是BD", "A and C", "1. T 2. F", "3", "-1"]),
    st.lists(st.sampled_from(["答案", "：", "T", "F", "A", "B", "1001", ".", " ", "\n", "是"])).map(
        "".join
    ),
    st.none(),
)


def test_every_chain_has_a_metadata_shape():
    assert {chain for chain, _ in CASES} == set(known_chains())


TRICKY = ["10", "1. x\n2. y\nThe answer is 2", "2. y", "A. x", "1", "", "\r\n", "答案：1"]
"""Replies that reach the deeper rules (numbered lines given back, option lines): each chain
reads every one under every metadata shape, on every run, not only when the search finds it."""


@pytest.mark.parametrize("case", CASES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(CASES)])
def test_extraction_chains_read_tricky_answers_without_raising(case):
    chain, meta = case
    for text in TRICKY:
        assert isinstance(extract(chain, text, meta), Extraction), text


@settings(max_examples=200, deadline=None)
@given(case=st.sampled_from(CASES), text=ANSWERS)
def test_extraction_chains_read_any_answer_without_raising(case, text):
    chain, meta = case
    result = extract(chain, text, meta)
    assert isinstance(result, Extraction)
