"""Quality control of standardized items (EduEval, Appendix C.1.4).

Near-duplicates by MinHash LSH over character 3-grams (threshold 0.85; works for Chinese),
difficulty flags from baseline-model accuracy (above 95 % or below 10 %), and anomaly flags:
prompt length outliers and answer-letter distributions skewed away from uniform.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from scipy.stats import chisquare


def shingles(text: str, size: int = 3) -> set[str]:
    """Character n-grams of `text` with whitespace removed."""
    compact = "".join(text.split())
    if len(compact) <= size:
        return {compact}
    return {compact[k : k + size] for k in range(len(compact) - size + 1)}


def _signature(text: str, num_perm: int) -> Any:
    from datasketch import MinHash

    signature = MinHash(num_perm=num_perm, seed=1)
    for gram in shingles(text):
        signature.update(gram.encode("utf-8"))
    return signature


def _key(item: Any) -> str:
    options = " ".join(f"{k}{v}" for k, v in (item.options or {}).items())
    return f"{item.prompt} {options}"


def dedup(
    items: Sequence[Any], threshold: float = 0.85, num_perm: int = 128
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Keep the first of each group of near-duplicates (same task shape).

    Returns the kept items and, for each removed one, the id it duplicates and the
    estimated Jaccard similarity of their 3-gram sets.
    """
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    kept: list[Any] = []
    removed: list[dict[str, Any]] = []
    signatures: dict[str, Any] = {}
    for index, item in enumerate(items):
        signature = _signature(_key(item), num_perm)
        twins = [k for k in lsh.query(signature) if signatures[k][1].shape == item.shape]
        if twins:
            first = min(twins, key=lambda k: signatures[k][2])
            removed.append(
                {
                    "id": item.id,
                    "duplicates": signatures[first][1].id,
                    "jaccard": round(signature.jaccard(signatures[first][0]), 3),
                    "reason": "near-duplicate (MinHash LSH)",
                }
            )
            continue
        key = f"{index}"
        signatures[key] = (signature, item, index)
        lsh.insert(key, signature)
        kept.append(item)
    return kept, removed


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
