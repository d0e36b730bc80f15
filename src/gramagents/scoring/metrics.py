"""Per-item metrics.

A metric turns an extracted answer, the gold answer and the item's metadata into scores (the
numbers averaged per task) and details (what a task-level aggregation needs, e.g. the edits
of a correction, which M2 scoring counts at the level of the grammar item).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..plugins import Registry
from .extract import Extraction


@dataclass
class ItemScore:
    """Scores of one item, and details kept for aggregation."""

    scores: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)


ItemMetric = Callable[[Extraction, Any, Mapping[str, Any]], ItemScore]
METRICS: Registry[ItemMetric] = Registry("metric")
METRICS.lazy("pair", "gramagents.scoring.pairs:pair_accuracy")
METRICS.lazy("pair-choice", "gramagents.scoring.pair_choice:choice_scores")


def metric(name: str) -> Callable[[ItemMetric], ItemMetric]:
    """Register a per-item metric: (extraction, gold, item metadata) -> ItemScore."""

    def register(fn: ItemMetric) -> ItemMetric:
        return METRICS.register(name, fn)

    return register


def score_item(
    name: str, extraction: Extraction, gold: Any, meta: Mapping[str, Any] | None = None
) -> ItemScore:
    """Scores of one item under metric `name`."""
    fn = METRICS.get(name)
    if fn is None:
        raise KeyError(f"no metric '{name}'")
    return fn(extraction, gold, meta or {})


@metric("acc")
def accuracy(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """1 when the extracted answer equals the gold answer; an invalid answer scores 0."""
    return ItemScore({"acc": 1.0 if not extraction.invalid and extraction.value == gold else 0.0})


@metric("sub-acc")
def sub_question_accuracy(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """Share of sub-questions answered right (CPG-EVAL §4.2).

    Position i of the extracted letters is compared with position i of the gold; missing
    positions are wrong.
    """
    gold_text = str(gold)
    if extraction.invalid or not gold_text:
        return ItemScore({"acc": 0.0})
    answer = str(extraction.value)
    right = sum(1 for a, g in zip(answer, gold_text, strict=False) if a == g)
    return ItemScore({"acc": right / len(gold_text)})


def mean(values: list[float]) -> float | None:
    """Arithmetic mean, None for no values."""
    return sum(values) / len(values) if values else None
