"""The reply corpus: every reply read as a careful grader reads it.

`tests/data/replies.jsonl` holds replies to the recipes' real prompts (rendered from the
project's templates and example items), in every answer shape the recipes have, each with the
reading a careful grader gives it; any other `tests/data/replies*.jsonl` is read too.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.scoring.extract import REASONS
from gramagents.testing.replies import read_corpus, read_entry

DATA = Path(__file__).resolve().parent / "data"
CORPORA = sorted(DATA.glob("replies*.jsonl"))
ENTRIES = [entry for path in CORPORA for entry in read_corpus(path)]
SHAPES = {
    "tf": "T/F",
    "tf-sequence": "T/F sequence",
    "letter": "option letter",
    "code": "CAT-GRA code",
    "letter-set": "grammar-book choices",
    "edu-choice": "EduEval letter",
    "edu-choices": "multi-answer set",
    "edu-label": "EduEval label",
    "edu-score": "EduEval score",
    "edu-text": "EduEval open answer",
    "syntax-phrase": "syntax phrase",
    "correction": "GEC correction",
    "gb-translation": "grammar-book translation",
    "pair-choice": "minimal pair as a forced choice",
}


def test_the_corpus_has_every_answer_shape_and_every_reason():
    assert len(ENTRIES) >= 200
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    chains = Counter(e["chain"] for e in ENTRIES)
    assert set(SHAPES) <= set(chains)
    reasons = Counter(e["expected"].get("reason") for e in ENTRIES)
    assert set(REASONS) <= set(reasons)
    echoed = {e["chain"] for e in ENTRIES if e["expected"].get("reason") == "echo"}
    refused = {e["chain"] for e in ENTRIES if e["expected"].get("reason") == "refusal"}
    assert echoed == set(SHAPES)  # every recipe's prompts are echoed somewhere
    assert {"tf", "tf-sequence", "letter", "edu-choice", "syntax-phrase", "correction"} <= refused


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_every_reply_is_read_as_a_grader_reads_it(entry):
    reading = read_entry(entry)
    assert (reading.found.value, reading.found.reason) == reading.expected, entry["note"]


def test_a_malformed_corpus_line_names_its_line_and_field(tmp_path):
    path = tmp_path / "replies-mine.jsonl"
    path.write_text(
        '{"id": "a", "chain": "tf", "prompt": "p", "reply": "T", "expected": {}}\n'
        '{"id": "b", "chain": "tf", "prompt": "p", "expected": {}}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as raised:
        read_corpus(path)
    assert str(raised.value) == f"{path}:2: field 'reply': missing"
    path.write_text('{"id": "a", "chain": "nope", "prompt": "p", "reply": "T", "expected": {}}\n')
    with pytest.raises(InputError, match=r":1: field 'chain': no chain 'nope'"):
        read_corpus(path)
