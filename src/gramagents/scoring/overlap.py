"""Order-aware overlap of two token sequences: the longest common subsequence and its F1.

ROUGE-L (EduEval's open answers) and the syntax paper's order-aware FITB F1 are both the
F-measure of the LCS over the two lengths; each recipe tokenizes as its paper does and calls
these. The LCS length is RapidFuzz's (`LCSseq`, C++, any sequences of hashable tokens).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import NamedTuple


class Overlap(NamedTuple):
    """Precision, recall and F1 of a candidate's tokens against a reference's."""

    precision: float
    recall: float
    f1: float


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences."""
    from rapidfuzz.distance import LCSseq  # 70 ms to import: not on every command's start

    return int(LCSseq.similarity(a, b)) if a and b else 0


def lcs_overlap(candidate: Sequence[Hashable], reference: Sequence[Hashable]) -> Overlap:
    """LCS precision (over the candidate), recall (over the reference) and their F1."""
    common = lcs_length(candidate, reference)
    if common == 0:
        return Overlap(0.0, 0.0, 0.0)
    precision, recall = common / len(candidate), common / len(reference)
    return Overlap(precision, recall, 2 * precision * recall / (precision + recall))
