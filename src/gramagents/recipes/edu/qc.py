"""Quality control of standardized items (EduEval, Appendix C.1.4).

Difficulty flags from baseline-model accuracy (above 95 % or below 10 %), and anomaly flags:
prompt length outliers and answer-letter distributions skewed away from uniform.
(Near-duplicates are removed by the engine's `minhash-dedup` filter.)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from scipy.stats import chisquare


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


def anomaly_flags(
    items: Sequence[Any], min_chars: int = 5, iqr_factor: float = 3.0, p_value: float = 0.01
) -> dict[str, list[str]]:
    """Per item id, the anomalies found.

    Prompts shorter than `min_chars` or beyond Q3 + `iqr_factor`·IQR of their task, and, in a
    task with 8+ multiple-choice items, answer letters skewed from uniform (chi-square p below
    `p_value`).
    """
    found: dict[str, list[str]] = defaultdict(list)
    by_task: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        by_task[item.task].append(item)
        if len(item.prompt) < min_chars:
            found[item.id].append(f"length: prompt of {len(item.prompt)} characters")
    for task, members in by_task.items():
        lengths = sorted(len(i.prompt) for i in members)
        if len(lengths) >= 4:
            q1, q3 = lengths[len(lengths) // 4], lengths[(3 * len(lengths)) // 4]
            spread = max(q3 - q1, 0.25 * q3)  # similar lengths: no fence a few characters off
            fence = q3 + iqr_factor * spread
            for item in members:
                if len(item.prompt) > fence:
                    found[item.id].append(f"length: {len(item.prompt)} characters > {fence:.0f}")
        letters = [i.answer for i in members if i.shape == "mc" and i.options]
        if len(letters) >= 8:
            choices = sorted({k for i in members if i.options for k in i.options})
            counts = Counter(letters)
            observed = [counts.get(k, 0) for k in choices]
            test = chisquare(observed)
            if test.pvalue < p_value:
                spread = ", ".join(f"{k} {counts.get(k, 0)}" for k in choices)
                for item in members:
                    if item.shape == "mc":
                        found[item.id].append(
                            f"answers: task {task} letters skewed ({spread}; p={test.pvalue:.3g})"
                        )
    return dict(found)
