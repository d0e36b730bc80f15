"""The engine's LCS overlap (ROUGE-L, order-aware F1) against the textbook definition."""

from __future__ import annotations

import random

import pytest

from gramagents.scoring.overlap import lcs_length, lcs_overlap


def textbook_lcs(a: list[str], b: list[str]) -> int:
    """The dynamic programme of the definition, cell by cell."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, start=1):
        for j, y in enumerate(b, start=1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
            )
    return table[-1][-1]


def test_lcs_length_is_the_textbook_one_on_random_token_lists():
    rng = random.Random(7)
    vocabulary = ["the", "cat", "sat", "on", "mat", "你", "好", "a"]
    for _ in range(300):
        a = rng.choices(vocabulary, k=rng.randint(0, 12))
        b = rng.choices(vocabulary, k=rng.randint(0, 12))
        assert lcs_length(a, b) == textbook_lcs(a, b), (a, b)


def test_tokens_are_compared_whole_not_by_character():
    assert lcs_length(["ab", "c"], ["a", "bc"]) == 0
    assert lcs_length(("x", "yy"), ("yy",)) == 1


def test_overlap_is_precision_over_the_candidate_and_recall_over_the_reference():
    overlap = lcs_overlap("the cat sat".split(), "the black cat sat down".split())
    assert overlap.precision == 1.0 and overlap.recall == pytest.approx(3 / 5)
    assert overlap.f1 == pytest.approx(2 * 1.0 * 0.6 / 1.6)
    assert lcs_overlap([], ["a"]) == (0.0, 0.0, 0.0)
    assert lcs_overlap(["a"], ["b"]) == (0.0, 0.0, 0.0)
