"""The paper's metrics (§3.3, Appendix C.1): FITB accuracy and its order-aware F1, and OA.

A fill-in-the-blank answer and its gold phrase are re-tokenized with NLTK and stripped of
punctuation before they are compared. The tokenizer is NLTK's `NLTKWordTokenizer` (the word
tokenizer behind `nltk.word_tokenize`) used directly: `word_tokenize` first splits sentences
with the Punkt model, a download, and an answer phrase is no more than one sentence. Tokens
are compared without case (a sentence-initial capital is no syntactic knowledge; the paper
does not say).

The F1 is the paper's stricter one: predicted words count only where they align in the same
order as the gold words, i.e. the matched words are a longest common subsequence of the two
token lists; precision and recall divide its length by the prediction's and the gold's.
"""

from __future__ import annotations

import math
import statistics
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ...api import lcs_overlap, require

QUOTE_TOKENS = {"``", "''", "`", "'", '"', "--"}


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    require("syntax-qa", "syntax-qa")
    from nltk.tokenize.destructive import NLTKWordTokenizer  # needs no downloaded data

    return NLTKWordTokenizer()


def _is_punctuation(token: str) -> bool:
    return token in QUOTE_TOKENS or all(unicodedata.category(c).startswith("P") for c in token)


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[str, ...]:
    """NLTK tokens of `text` without punctuation, case-folded."""
    tokens = _tokenizer().tokenize(text)
    return tuple(t.casefold() for t in tokens if not _is_punctuation(t))


def fitb_scores(predicted: str | None, gold: str) -> dict[str, float]:
    """Accuracy (same words in the same order) and order-aware F1 of one answer."""
    gold_words = words(gold)
    if predicted is None:
        return {"acc": 0.0, "f1": 0.0}
    said = words(predicted)
    f1 = lcs_overlap(said, gold_words).f1
    return {"acc": 1.0 if said == gold_words and said else 0.0, "f1": f1}


def overall(tf: float, mc: float, fitb_acc: float, fitb_f1: float) -> float:
    """OA = (TF + MC + (FITB_acc + FITB_F1) / 2) / 3, the paper's Equation 1."""
    return (tf + mc + (fitb_acc + fitb_f1) / 2) / 3


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (None for the std of fewer than two values)."""
    finite = [v for v in values if v is not None and not math.isnan(v)]
    if not finite:
        return None, None
    return statistics.fmean(finite), statistics.stdev(finite) if len(finite) > 1 else None
