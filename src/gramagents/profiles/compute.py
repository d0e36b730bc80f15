"""A profile from items' scores: competences, weakest grammar points, paired comparisons.

A competence pools the items of every task the suite puts in it: its score is the mean of
their scores, its RANDOM the mean of their tasks' RANDOM, and its chance-corrected score
(score − RANDOM) / (1 − RANDOM). Items weigh the same whatever their task, so a task with
more items counts more. The interval resamples the competence's items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from .scores import ItemScore
from .stats import (
    Estimate,
    Paired,
    chance_corrected,
    corrected_estimate,
    holm,
    paired_difference,
)

EXAMPLES = 3
"""Example items shown per weak grammar point."""


@dataclass(frozen=True)
class Settings:
    """How the statistics are drawn."""

    boot: int = 2000
    seed: int = 1234
    min_items: int = 3
    """Items a grammar point needs to be ranked among the weakest."""
    weakest: int = 10
    """Grammar points listed per model."""


def _arrays(rows: list[ItemScore]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([r.score for r in rows]), np.array([r.random for r in rows])


def _block(rows: list[ItemScore], settings: Settings) -> dict[str, Any]:
    """Score, RANDOM, chance-corrected estimate and invalid rate of some items."""
    scores, random = _arrays(rows)
    estimate = corrected_estimate(scores, random, settings.boot, settings.seed)
    return {
        "n": len(rows),
        "score": float(scores.mean()),
        "random": float(random.mean()),
        "corrected": _estimate(estimate),
        "invalid_rate": sum(r.invalid for r in rows) / len(rows),
    }


def _estimate(estimate: Estimate) -> dict[str, float | None]:
    return {"value": estimate.value, "low": estimate.low, "high": estimate.high}


def competences(
    rows: list[ItemScore],
    competence_of: dict[str, str],
    order: list[str],
    settings: Settings,
    models: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per model, per competence (in `order`): its block and its tasks' blocks."""
    grouped: dict[str, dict[str, list[ItemScore]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.task in competence_of:
            grouped[row.model][competence_of[row.task]].append(row)
    out: dict[str, dict[str, Any]] = {}
    for model in _ordered(grouped, models):
        out[model] = {}
        for competence in order:
            items = grouped[model].get(competence, [])
            if not items:
                out[model][competence] = None
                continue
            by_task: dict[str, list[ItemScore]] = defaultdict(list)
            for row in items:
                by_task[row.task].append(row)
            block = _block(items, settings)
            block["tasks"] = {t: _block(r, settings) for t, r in sorted(by_task.items())}
            out[model][competence] = block
    return out


def weakest_points(rows: list[ItemScore], settings: Settings) -> dict[str, list[dict[str, Any]]]:
    """Per model, its grammar points worst first (by chance-corrected score, then most items).

    Items are joined by `namespace:point` across entries and tasks; points with fewer than
    `min_items` items are left out (too few to rank).
    """
    grouped: dict[str, dict[str, list[ItemScore]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row.point is not None:
            grouped[row.model][row.point].append(row)
    out: dict[str, list[dict[str, Any]]] = {}
    for model, points in sorted(grouped.items()):
        ranked = []
        for point, items in points.items():
            if len(items) < settings.min_items:
                continue
            scores, random = _arrays(items)
            corrected = chance_corrected(scores, random)
            ranked.append((corrected, -len(items), point, items))
        ranked.sort(key=lambda t: (t[0], t[1], t[2]))
        out[model] = [
            _point(point, corrected, items)
            for corrected, _, point, items in ranked[: settings.weakest]
        ]
    return out


def _point(point: str, corrected: float, items: list[ItemScore]) -> dict[str, Any]:
    worst = sorted(items, key=lambda r: (r.score, r.entry, r.item_id))[:EXAMPLES]
    return {
        "point": point,
        "n": len(items),
        "score": sum(r.score for r in items) / len(items),
        "corrected": corrected,
        "tasks": sorted({r.task for r in items}),
        "entries": sorted({r.entry for r in items}),
        "examples": [
            {
                "entry": r.entry,
                "eval": r.folder or f"evals/{r.entry}",
                "item_id": r.item_id,
                "shown_item": r.shown_item,
                "task": r.task,
                "score": r.score,
                "answer": r.answer,
                "gold": r.gold,
                "invalid": r.invalid,
                "reason": r.reason,
            }
            for r in worst
        ],
    }


def paired(
    rows: list[ItemScore],
    competence_of: dict[str, str] | None,
    settings: Settings,
    models: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Every pair of models on the items both answered: per task and per competence.

    Without `competence_of` (evals outside a suite), per task only. Holm's correction runs
    over all the McNemar tests of one pair (its tasks and competences). Pairs follow
    `models` (A before B as the user named them), then the rest by name.
    """
    by_model: dict[str, dict[tuple[str, str], ItemScore]] = defaultdict(dict)
    for row in rows:
        if competence_of is None or row.task in competence_of:
            by_model[row.model][row.key] = row
    out = []
    for a, b in combinations(_ordered(by_model, models), 2):
        common = sorted(set(by_model[a]) & set(by_model[b]))
        groups, refused = _groups(by_model[a], by_model[b], common, competence_of)
        names = sorted(groups)
        tests = holm([_pair(by_model[a], by_model[b], groups[n], settings) for n in names])
        out.append(
            {
                "a": a,
                "b": b,
                "n": len({k for keys in groups.values() for k in keys}),
                "rows": [_pair_row(*n, t) for n, t in zip(names, tests, strict=True)],
                "refused": [
                    {"kind": kind, "name": name, "why": why}
                    for (kind, name), why in sorted(refused.items())
                ],
            }
        )
    return out


Keys = list[tuple[str, str]]


def _groups(
    a: dict[tuple[str, str], ItemScore],
    b: dict[tuple[str, str], ItemScore],
    common: Keys,
    competence_of: dict[str, str] | None,
) -> tuple[dict[tuple[str, str], Keys], dict[tuple[str, str], str]]:
    """The items compared per task and competence, and what is refused and why.

    Items the two models were asked by different methods (a minimal pair scored by
    log-probabilities for one, asked as a forced choice of the other) are never compared,
    and neither is a competence that holds any.
    """
    groups: dict[tuple[str, str], Keys] = defaultdict(list)
    refused: dict[tuple[str, str], str] = {}
    for key in common:
        task, other = a[key].task, b[key].task
        if task != other:
            why = method_mismatch(task, other)
            refused["task", f"{task} / {other}"] = why
            if competence_of is not None:
                refused["competence", competence_of[task]] = why
            continue
        groups["task", task].append(key)
        if competence_of is not None:
            groups["competence", competence_of[task]].append(key)
    for name in refused:
        groups.pop(name, None)
    return groups, refused


def method_mismatch(task: str, other: str) -> str:
    """Why items asked by two methods are not compared."""
    from ..tasks import get_task
    from ..workflow.pair_methods import DESCRIBED, method_of

    shown = [
        f"{DESCRIBED.get(method_of(get_task(t)) or '', 'another task')} ({t})"
        for t in (task, other)
    ]
    return (
        f"A was measured by {shown[0]}, B by {shown[1]}: the two methods measure different "
        "things (prompting is not log-probability, Hu & Levy 2023), so their scores are not "
        "compared; profile both models by one method"
    )


def _ordered(found: Iterable[str], models: list[str] | None) -> list[str]:
    """The models found, those of `models` first in its order, then the rest by name."""
    found = set(found)
    first = [m for m in models or [] if m in found]
    return first + sorted(found - set(first))


def _pair(
    a: dict[tuple[str, str], ItemScore],
    b: dict[tuple[str, str], ItemScore],
    keys: Iterable[tuple[str, str]],
    settings: Settings,
) -> Paired:
    keys = list(keys)
    return paired_difference(
        np.array([a[k].score for k in keys]),
        np.array([b[k].score for k in keys]),
        settings.boot,
        settings.seed,
    )


def _pair_row(kind: str, name: str, test: Paired) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "n": test.n,
        "difference": _estimate(test.difference),
        "a_only": test.a_only,
        "b_only": test.b_only,
        "p": test.p,
        "p_holm": test.p_holm,
    }


def profile_data(
    rows: list[ItemScore],
    competence_of: dict[str, str],
    order: list[str],
    settings: Settings,
    models: list[str] | None = None,
) -> dict[str, Any]:
    """Everything `profile.json` holds besides the suite and the entries."""
    return {
        "competences": competences(rows, competence_of, order, settings, models),
        "weakest": weakest_points(rows, settings),
        "paired": paired(rows, competence_of, settings, models),
        "settings": {
            "boot": settings.boot,
            "seed": settings.seed,
            "min_items": settings.min_items,
            "confidence": 0.95,
        },
    }
