"""The profile's statistics: chance-corrected scores, bootstrap intervals, paired tests.

Intervals are percentile bootstraps from `scipy.stats.bootstrap` over items (the percentile
method, not BCa: BCa is undefined when every item scores the same, which a competence a model
masters does). Paired tests: McNemar's exact test on the discordant items of tasks scored right
or wrong (the two-sided binomial test of `scipy.stats.binomtest` at one half, which is what the
exact McNemar test is), and Holm's step-down correction over every test of one comparison (a
few lines here: scipy has no Holm, and statsmodels would bring pandas into every install for it).
Everything is seeded, so a profile computed twice prints the same figures.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95

RESAMPLE_CELLS = 1 << 22
"""Item draws per vectorized call of a bootstrap (about 32 MB of indices, as many of values).

Resamples are drawn in batches of this many cells, so memory stays bounded however many items
there are; the batches draw the same indices from the same generator in the same order, so the
interval is the one a single call would give.
"""


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap interval (None where there are too few items)."""

    value: float
    low: float | None
    high: float | None


def chance_corrected(scores: np.ndarray, baselines: np.ndarray) -> float:
    """(mean score − mean RANDOM) / (1 − mean RANDOM): 0 at chance, 1 when every item is right.

    Args:
        scores: Each item's score in [0, 1].
        baselines: Each item's expected score under a uniform random guess (its task's RANDOM).
    """
    random = float(np.mean(baselines))
    if random >= 1.0:
        return float("nan")
    return (float(np.mean(scores)) - random) / (1.0 - random)


def _corrected_stat(scores: np.ndarray, baselines: np.ndarray, axis: int = -1) -> np.ndarray:
    random = np.mean(baselines, axis=axis)
    return (np.mean(scores, axis=axis) - random) / (1.0 - random)


def corrected_estimate(scores: np.ndarray, baselines: np.ndarray, boot: int, seed: int) -> Estimate:
    """The chance-corrected score with a bootstrap 95 % interval over items (resampled whole)."""
    value = chance_corrected(scores, baselines)
    if boot <= 0 or len(scores) < 2 or not np.isfinite(value):
        return Estimate(value, None, None)
    result = _bootstrap((scores, baselines), _corrected_stat, boot, seed, paired=True)
    return Estimate(value, *result)


def _mean_stat(values: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(values, axis=axis)


def mean_estimate(values: np.ndarray, boot: int, seed: int) -> Estimate:
    """A mean with its bootstrap 95 % interval over items."""
    value = float(np.mean(values)) if len(values) else float("nan")
    if boot <= 0 or len(values) < 2:
        return Estimate(value, None, None)
    return Estimate(value, *_bootstrap((values,), _mean_stat, boot, seed, paired=False))


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    boot: int,
    seed: int,
    paired: bool,
) -> tuple[float, float]:
    if all(np.all(d == d[0]) for d in data):  # nothing varies: every resample is the same
        value = float(statistic(*(d[None, :] for d in data))[0])
        return value, value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.bootstrap(
            data,
            statistic,
            n_resamples=boot,
            vectorized=True,
            batch=max(1, RESAMPLE_CELLS // len(data[0])),  # one sample or paired: same draws
            paired=paired,
            method="percentile",
            confidence_level=CONFIDENCE,
            rng=np.random.default_rng(seed),
        )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


@dataclass(frozen=True)
class Paired:
    """Model A against model B on the items both answered."""

    n: int
    difference: Estimate
    """Mean score of A minus mean score of B, with a paired bootstrap interval."""
    p: float | None
    """McNemar's exact p-value (items scored right or wrong only), else None."""
    a_only: int = 0
    """Items A got right and B wrong (McNemar's discordant cells)."""
    b_only: int = 0
    p_holm: float | None = None
    """`p` after Holm's correction over every test of the comparison."""


def paired_difference(a: np.ndarray, b: np.ndarray, boot: int, seed: int) -> Paired:
    """A's scores against B's on the same items, in the same order."""
    if len(a) != len(b):
        raise ValueError("paired scores need the same items")
    difference = mean_estimate(a - b, boot, seed)
    binary = bool(np.all(np.isin(a, (0.0, 1.0))) and np.all(np.isin(b, (0.0, 1.0))))
    if not binary or not len(a):
        return Paired(len(a), difference, None)
    a_only = int(np.sum((a == 1.0) & (b == 0.0)))
    b_only = int(np.sum((a == 0.0) & (b == 1.0)))
    discordant = a_only + b_only  # concordant items do not enter the exact test
    p = 1.0 if discordant == 0 else float(stats.binomtest(a_only, discordant, 0.5).pvalue)
    return Paired(len(a), difference, p, a_only, b_only)


def holm(pairs: list[Paired]) -> list[Paired]:
    """The comparisons with Holm-corrected p-values over those that have a p-value."""
    tested = [i for i, pair in enumerate(pairs) if pair.p is not None]
    if not tested:
        return pairs
    corrected = holm_adjusted([pairs[i].p for i in tested])
    out = list(pairs)
    for i, value in zip(tested, corrected, strict=True):
        pair = pairs[i]
        out[i] = Paired(pair.n, pair.difference, pair.p, pair.a_only, pair.b_only, float(value))
    return out


def holm_adjusted(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    The k-th smallest of m p-values is multiplied by m - k + 1 (k from 1), the products are
    made non-decreasing in that order, and capped at 1.
    """
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=p_values.__getitem__)):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
