"""Quality control of standardized items (EduEval, Appendix C.1.4).

Difficulty flags from baseline-model accuracy (above 95 % or below 10 %), and anomalies:

- **length**: a prompt outside its task's far fences on the log of its length (Tukey's fences,
  Q1 − k·IQR and Q3 + k·IQR, on log characters: lengths are skewed, a passage item is not an
  outlier for being long, a stem that lost its text is one for being short);
- **answer letters**: per task, items with the same number of options are tested together
  against a uniform key over the letters they offer (`letter_skew`), so that letters only a
  few items offer (E, F) are never counted as letters that never occur. A skewed group is one
  finding about the task's key, not about each item: its description and a few items keyed
  with the most over-represented letter (spot checks of the key) go to review.

(Near-duplicates are removed by the engine's `minhash-dedup` filter.)
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .options import LETTERS

MIN_SPREAD = math.log(1.5)
"""The least interquartile range on log length: lengths within a factor 1.5 of each other."""
EXACT_LIMIT = 200_000
"""Most outcomes the exact multinomial test enumerates (larger small groups are not tested)."""


def difficulty_flags(
    accuracy: dict[str, float], high: float = 0.95, low: float = 0.10
) -> dict[str, str]:
    """`too_easy` above `high`, `too_hard` below `low` (baseline-model accuracy per item)."""
    flags = {}
    for item_id, value in accuracy.items():
        if value > high:
            flags[item_id] = "too_easy"
        elif value < low:
            flags[item_id] = "too_hard"
    return flags


def length_flags(items: Sequence[Any], fence: float = 2.0) -> dict[str, str]:
    """Items whose prompt length is outside their task's fences on log length, with why."""
    by_task: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        by_task[item.task].append(item)
    found = {}
    for members in by_task.values():
        logs = sorted(math.log(max(len(i.prompt), 1)) for i in members)
        if len(logs) < 8:
            continue
        q1, q3 = logs[len(logs) // 4], logs[(3 * len(logs)) // 4]
        spread = max(q3 - q1, MIN_SPREAD)  # lengths nearly alike: no fence a character off
        low, high = q1 - fence * spread, q3 + fence * spread
        for item in members:
            size = len(item.prompt)
            if math.log(max(size, 1)) < low:
                found[item.id] = f"length: {size} characters < {math.exp(low):.0f}"
            elif math.log(max(size, 1)) > high:
                found[item.id] = f"length: {size} characters > {math.exp(high):.0f}"
    return found


@dataclass(frozen=True)
class Skew:
    """The answer key of one task's items with the same number of options, tested."""

    task: str
    options: int
    counts: dict[str, int]
    p_value: float
    test: str
    """`chi-square`, or `exact` (multinomial) where an expected count is under 5."""

    @property
    def items(self) -> int:
        """How many items the group has."""
        return sum(self.counts.values())

    def most_over(self) -> str:
        """The letter furthest above its expected count (standardized residual)."""
        expected = self.items / self.options
        return max(self.counts, key=lambda k: (self.counts[k] - expected, -ord(k)))

    def describe(self) -> str:
        """One line: the task, the letters' counts, the test."""
        spread = ", ".join(f"{k} {n}" for k, n in self.counts.items())
        return (
            f"answers: {self.task}, {self.options}-option items keyed {spread} "
            f"({self.test} p={self.p_value:.2g})"
        )


def _multinomial_outcomes(n: int, k: int) -> Iterator[tuple[int, ...]]:
    if k == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _multinomial_outcomes(n - first, k - 1):
            yield (first, *rest)


def exact_uniform_p(observed: Sequence[int]) -> float | None:
    """The exact multinomial test's p against equal probabilities (None: too many outcomes).

    The probability of every outcome no more likely than the one observed.
    """
    n, k = sum(observed), len(observed)
    if math.comb(n + k - 1, k - 1) > EXACT_LIMIT:
        return None

    def log_p(counts: Sequence[int]) -> float:
        return math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in counts) - n * math.log(k)

    bound = log_p(observed) + 1e-9
    return min(
        1.0, sum(math.exp(q) for c in _multinomial_outcomes(n, k) if (q := log_p(c)) <= bound)
    )


def test_group(task: str, options: int, letters: Sequence[str]) -> Skew | None:
    """Chi-square against a uniform key where every expected count is 5 or more, else exact."""
    from scipy.stats import chisquare

    counts = Counter(letters)
    observed = [counts.get(k, 0) for k in LETTERS[:options]]
    if sum(observed) / options >= 5:
        p, how = float(chisquare(observed).pvalue), "chi-square"
    else:
        exact = exact_uniform_p(observed)
        if exact is None:
            return None
        p, how = exact, "exact"
    return Skew(task, options, dict(zip(LETTERS[:options], observed, strict=True)), p, how)


def letter_skew(
    items: Sequence[Any], alpha: float = 0.01, spot_checks: int = 3, seed: int = 0
) -> tuple[dict[str, str], list[Skew], int]:
    """Skewed answer keys: flags of the spot checks, the skewed groups, the groups tested.

    Single-answer items with options are grouped by task and option count; each group is
    tested against a uniform key over its own letters, at `alpha` divided by the number of
    groups tested (Bonferroni). Of each skewed group, `spot_checks` items keyed with its most
    over-represented letter are drawn with the seed for a reviewer to check the key.
    """
    groups: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for item in items:
        if item.shape == "mc" and item.options and item.answer in item.options:
            groups[item.task, len(item.options)].append(item)
    tested = []
    for (task, options), members in groups.items():
        result = test_group(task, options, [i.answer for i in members])
        if result is not None:
            tested.append((result, members))
    skewed = [(r, m) for r, m in tested if r.p_value < alpha / max(len(tested), 1)]
    flags: dict[str, str] = {}
    for result, members in skewed:
        letter = result.most_over()
        keyed = [i for i in members if i.answer == letter]
        rng = random.Random(f"{seed}/{result.task}/{result.options}")
        for item in rng.sample(keyed, min(spot_checks, len(keyed))):
            flags[item.id] = f"{result.describe()}; spot-check this {letter}-keyed item's key"
    return flags, [r for r, _ in skewed], len(tested)


def anomaly_flags(
    items: Sequence[Any], fence: float = 2.0, alpha: float = 0.01, spot_checks: int = 3,
    seed: int = 0,
) -> tuple[dict[str, list[str]], dict[str, int]]:  # fmt: skip
    """Per item id, the anomalies found, and the counts of each kind."""
    found: dict[str, list[str]] = defaultdict(list)
    lengths = length_flags(items, fence)
    for key, reason in lengths.items():
        found[key].append(reason)
    skew_flags, skewed, tested = letter_skew(items, alpha, spot_checks, seed)
    for key, reason in skew_flags.items():
        found[key].append(reason)
    counts = {
        "length": len(lengths),
        "key_groups_tested": tested,
        "key_groups_skewed": len(skewed),
        "key_spot_checks": len(skew_flags),
    }
    return dict(found), counts
