"""Agreement statistics between raters, and their bootstrap over items.

The plain functions take aligned score arrays, one entry per item, with NaN for a missing
rating; an item missing on either side is left out of that comparison. Correlations come from
scipy; kappa matches scikit-learn's quadratic-weighted `cohen_kappa_score`; Krippendorff's alpha
comes from the `krippendorff` package.

The bootstrap resamples items with replacement. A resample is a vector of counts (how often
each item was drawn), and the `weighted_*` functions compute every statistic for all resamples
at once from those counts, exactly as the plain functions would on the resampled arrays
(duplicated items are ties), which makes a thousand resamples take a fraction of a second.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from scipy import stats

Scores = Sequence[float] | np.ndarray
STATISTICS = ("pearson", "spearman", "kendall", "qwk", "alpha", "exact", "within")
"""Statistics computed for every comparison of two raters, in report order."""


# --- plain statistics -------------------------------------------------------------------------


def paired(x: Scores, y: Scores) -> tuple[np.ndarray, np.ndarray]:
    """The entries where both vectors have a value."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"expected two 1-d arrays of one length, got {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def _correlation(test: Callable[..., Any], x: Scores, y: Scores) -> float:
    a, b = paired(x, y)
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(test(a, b).statistic)


def pearson(x: Scores, y: Scores) -> float:
    """Pearson's r (scipy); NaN with fewer than two pairs or a constant side."""
    return _correlation(stats.pearsonr, x, y)


def spearman(x: Scores, y: Scores) -> float:
    """Spearman's rho (scipy); NaN with fewer than two pairs or a constant side."""
    return _correlation(stats.spearmanr, x, y)


def kendall(x: Scores, y: Scores) -> float:
    """Kendall's tau-b (scipy); NaN with fewer than two pairs or a constant side."""
    return _correlation(stats.kendalltau, x, y)


def round_scores(values: Scores) -> np.ndarray:
    """Round half up to integers (82.5 -> 83): the categories of kappa and exact agreement."""
    return np.floor(np.asarray(values, dtype=float) + 0.5)


def quadratic_kappa(x: Scores, y: Scores) -> float:
    """Quadratic-weighted Cohen's kappa on integer-rounded scores.

    The categories are the union of both sides' rounded scores, weighted by the squared
    distance of their positions in sorted order: the same as
    `sklearn.metrics.cohen_kappa_score(a, b, weights="quadratic")` on the rounded scores.
    NaN when there are no pairs or only one category.
    """
    a, b = paired(x, y)
    if len(a) == 0:
        return math.nan
    a, b = round_scores(a), round_scores(b)
    labels = np.union1d(a, b)
    k = len(labels)
    observed = np.zeros((k, k))
    np.add.at(observed, (np.searchsorted(labels, a), np.searchsorted(labels, b)), 1.0)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    positions = np.arange(k, dtype=float)
    weights = (positions[:, None] - positions[None, :]) ** 2
    disagreement_expected = float((weights * expected).sum())
    if disagreement_expected == 0:
        return math.nan
    return 1.0 - float((weights * observed).sum()) / disagreement_expected


def exact_agreement(x: Scores, y: Scores) -> float:
    """Share of items whose integer-rounded scores are equal."""
    a, b = paired(x, y)
    return float(np.mean(round_scores(a) == round_scores(b))) if len(a) else math.nan


def within_agreement(x: Scores, y: Scores, k: float = 1.0) -> float:
    """Share of items whose integer-rounded scores differ by at most `k`."""
    a, b = paired(x, y)
    if not len(a):
        return math.nan
    return float(np.mean(np.abs(round_scores(a) - round_scores(b)) <= k + 1e-9))


def krippendorff_alpha(
    ratings: Sequence[Sequence[float]] | np.ndarray,
    metric: Literal["interval", "nominal"] = "interval",
) -> float:
    """Krippendorff's alpha for any number of raters, with missing ratings.

    Computed by the `krippendorff` package (its coincidence-matrix definition); the bootstrap
    uses `weighted_alpha`, which gives the same number for many resamples at once.

    Args:
        ratings: A (raters, items) array with NaN for a missing rating.
        metric: `interval` or `nominal`.

    Returns:
        Alpha, or NaN when fewer than two different values are pairable.
    """
    import krippendorff

    if metric not in ("interval", "nominal"):
        raise ValueError(f"unknown metric {metric!r}; use 'interval' or 'nominal'")
    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"expected a (raters, items) array, got shape {data.shape}")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    data = data[:, pairable]
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = krippendorff.alpha(reliability_data=data, level_of_measurement=metric)
    return float(value)


def pair_statistics(x: Scores, y: Scores, within: float = 1.0) -> dict[str, float]:
    """Every statistic of `STATISTICS` for two aligned score vectors."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return {
        "pearson": pearson(a, b),
        "spearman": spearman(a, b),
        "kendall": kendall(a, b),
        "qwk": quadratic_kappa(a, b),
        "alpha": krippendorff_alpha(np.vstack([a, b])),
        "exact": exact_agreement(a, b),
        "within": within_agreement(a, b, within),
    }


# --- bootstrap over items ---------------------------------------------------------------------


def resample_counts(n_items: int, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap resamples of items as counts: row b says how often resample b drew each item.

    Each resample draws `n_items` items with replacement; the same seed gives the same rows.
    """
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_items, size=(n_boot, n_items))
    flat = (draws + n_items * np.arange(n_boot)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n_items).reshape(n_boot, n_items).astype(float)


def percentile_interval(draws: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap draws, ignoring NaN (all NaN: NaN, NaN)."""
    values = np.asarray(draws, dtype=float)
    if values.size == 0 or np.isnan(values).all():
        return math.nan, math.nan
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.nanpercentile(values, [tail, 100.0 - tail])
    return float(low), float(high)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    safe = np.where(denominator > 1e-12, denominator, 1.0)
    return np.where(denominator > 1e-12, numerator / safe, np.nan)


def _weighted_pearson(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson per row of `w`; `a` and `b` are (items,) or (resamples, items)."""
    total = w.sum(axis=1, keepdims=True)
    total = np.where(total > 0, total, 1.0)
    da = a - (w * a).sum(axis=1, keepdims=True) / total
    db = b - (w * b).sum(axis=1, keepdims=True) / total
    covariance = (w * da * db).sum(axis=1)
    variance = (w * da * da).sum(axis=1) * (w * db * db).sum(axis=1)
    return _ratio(covariance, np.sqrt(np.clip(variance, 0.0, None)))


def _weighted_ranks(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Mid-ranks of each item in each resample (ties averaged, as scipy ranks them)."""
    below = (values[None, :] < values[:, None]).astype(float)  # below[i, j]: x_j < x_i
    equal = (values[None, :] == values[:, None]).astype(float)
    return w @ below.T + (w @ equal.T + 1.0) / 2.0


def _weighted_kendall(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per resample; copies of one item are tied with each other."""
    sign_a = np.sign(a[:, None] - a[None, :])
    sign_b = np.sign(b[:, None] - b[None, :])

    def pairs(matrix: np.ndarray) -> np.ndarray:
        return ((w @ matrix) * w).sum(axis=1) / 2.0

    return _ratio(pairs(sign_a * sign_b), np.sqrt(pairs(np.abs(sign_a)) * pairs(np.abs(sign_b))))


def _weighted_kappa(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Quadratic kappa per resample, over the categories present in that resample."""
    a, b = round_scores(a), round_scores(b)
    labels = np.union1d(a, b)
    ia, ib = np.searchsorted(labels, a), np.searchsorted(labels, b)
    onehot = np.eye(len(labels))
    present = (w @ onehot[ia] + w @ onehot[ib]) > 0  # (resamples, categories)
    position = np.cumsum(present, axis=1) - 1.0  # a category's rank among those present
    pa, pb = position[:, ia], position[:, ib]
    total = w.sum(axis=1)
    observed = (w * (pa - pb) ** 2).sum(axis=1)
    sum_a, sum_b = (w * pa).sum(axis=1), (w * pb).sum(axis=1)
    expected = (w * pa**2).sum(axis=1) + (w * pb**2).sum(axis=1)
    expected = expected - 2.0 * sum_a * sum_b / np.where(total > 0, total, 1.0)
    return 1.0 - _ratio(observed, expected)


def weighted_kappa(x: Scores, y: Scores, counts: np.ndarray) -> np.ndarray:
    """Quadratic-weighted kappa for each resample (row) of `counts`, as `quadratic_kappa`.

    Items missing on either side are left out.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = ~(np.isnan(a) | np.isnan(b))
    return _weighted_kappa(a[both], b[both], np.asarray(counts, dtype=float)[:, both])


def weighted_alpha(ratings: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Interval Krippendorff's alpha per resample of items (columns of `ratings`).

    Uses the identity behind the coincidence matrix for the interval metric: the observed
    disagreement sums 2 m SS / (m - 1) over items (SS: the sum of squares of an item's m
    ratings about their mean), the expected one is 2 n times the sum of squares of all n
    pairable values about their mean.
    """
    data = np.asarray(ratings, dtype=float)
    present = ~np.isnan(data)
    m = present.sum(axis=0).astype(float)
    keep = m >= 2
    data, present, m, w = data[:, keep], present[:, keep], m[keep], w[:, keep]
    filled = np.where(present, data, 0.0)
    sums, squares = filled.sum(axis=0), (filled**2).sum(axis=0)
    within = squares - sums**2 / np.where(m > 0, m, 1.0)
    observed = w @ (2.0 * m * within / np.where(m > 1, m - 1.0, 1.0))
    n = w @ m
    total_squares = w @ squares - (w @ sums) ** 2 / np.where(n > 0, n, 1.0)
    return 1.0 - _ratio((n - 1.0) * observed, 2.0 * n * total_squares)


def weighted_statistics(
    x: Scores, y: Scores, counts: np.ndarray, within: float = 1.0
) -> dict[str, np.ndarray]:
    """Every statistic of `STATISTICS` for each resample (row) of `counts`.

    Args:
        x: Scores of one rater per item (NaN: missing).
        y: Scores of the other rater per item.
        counts: (resamples, items) draw counts, from `resample_counts`.
        within: The k of within-k agreement.

    Returns:
        An array of one value per resample for each statistic (NaN where undefined).
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    both = ~(np.isnan(a) | np.isnan(b))
    a, b, w = a[both], b[both], np.asarray(counts, dtype=float)[:, both]
    total = w.sum(axis=1)
    ra, rb = round_scores(a), round_scores(b)
    return {
        "pearson": _weighted_pearson(a[None, :], b[None, :], w),
        "spearman": _weighted_pearson(_weighted_ranks(a, w), _weighted_ranks(b, w), w),
        "kendall": _weighted_kendall(a, b, w),
        "qwk": _weighted_kappa(a, b, w),
        "alpha": weighted_alpha(np.vstack([a, b]), w),
        "exact": _ratio(w @ (ra == rb).astype(float), total),
        "within": _ratio(w @ (np.abs(ra - rb) <= within + 1e-9).astype(float), total),
    }
