"""Items' scores as a profile pools them: one row per (entry, model, item) from eval folders.

Every task's headline score is read as a share of [0, 1] (`judge_pct` and other `_pct`
metrics are divided by 100); an invalid answer counts with the score its task gave it (0 for
every shipped task). An item's RANDOM is its task's mean random baseline as the eval recorded
it (`manifest.random_baselines`); a task without one (correction scored by F0.5, judged
teaching tasks) counts with RANDOM 0, since a random guess scores nothing on them.

A task whose own figure is a macro average over units (the GEC recipe's F0.5, CTSEG's mean
over grammar items of each item's M2 F0.5 over its sentences) gives one row per unit, scored
as the task's aggregation scores it (`Aggregate.units`), not one per sentence: the rows'
mean is then the recipe's own figure, and intervals resample grammar items.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import EvalManifest
from ..runtime.run import read_manifest
from ..runtime.rundir import iter_jsonl
from ..tasks import get_task


@dataclass(frozen=True)
class ItemScore:
    """One model's score on one item of a suite entry."""

    entry: str
    model: str
    item_id: str
    task: str
    score: float
    random: float
    invalid: float
    """Whether the answer could not be read (1 or 0); for a unit of several items, the share
    of its answers that could not be."""
    point: str | None
    """`namespace:point`, the id items are joined by across entries; None when it has none."""
    answer: Any = None
    gold: Any = None
    folder: str = ""
    """The eval folder (relative to the profile) whose records hold it."""
    reason: str | None = None
    """Why the answer is invalid (`refusal`, `no-answer`, ...), when it is."""
    first_item: str | None = None
    """For a unit of several items (a grammar item's sentences), its first item: the one a
    link to the unit opens. None for a row that is one item."""

    @property
    def shown_item(self) -> str:
        """The item a link to this row opens."""
        return self.first_item or self.item_id

    @property
    def key(self) -> tuple[str, str]:
        """The item across models: its entry and its id."""
        return self.entry, self.item_id


def share(task: str, scores: dict[str, float]) -> float | None:
    """The task's headline score of one item as a share of [0, 1], if it has one."""
    spec = get_task(task)
    headline = spec.headline if spec is not None else next(iter(scores), None)
    if headline is None or headline not in scores:
        return None
    value = float(scores[headline])
    if headline.endswith("_pct"):
        value /= 100.0
    return min(1.0, max(0.0, value))


def read_entry(
    folder: Path,
    entry: str,
    namespace: str,
    tasks: set[str],
    point_key: str = "point",
    *,
    shown: str = "",
) -> list[ItemScore]:
    """The scores of an eval folder's items of `tasks`, last record per (model, item) winning.

    `shown`: the folder as a profile names it (`evals/climp+choice`), for links to its items.

    An item's grammar point is `namespace:` and its score record's `meta[point_key]`. A task
    scored as a macro average over units gives a row per unit (`_unit_rows`).
    """
    manifest = read_manifest(folder)
    random = manifest.random_baselines if isinstance(manifest, EvalManifest) else {}
    path = folder / "scores.jsonl"
    if not path.is_file():
        return []
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for record in iter_jsonl(path, skip_unreadable=True):
        if record.get("task") in tasks:
            last[str(record["model"]), record["task"], str(record["item_id"])] = record
    where = _Where(entry, namespace, point_key, random, shown)
    rows: list[ItemScore] = []
    aggregated: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for (model, task, _), record in last.items():
        spec = get_task(task)
        if spec is not None and spec.aggregate is not None and record.get("scores"):
            aggregated[model, task].append(record)
        elif (row := where.item_row(record)) is not None:
            rows.append(row)
    for (model, task), records in aggregated.items():
        rows += _unit_rows(where, model, task, records)
    return rows


@dataclass(frozen=True)
class _Where:
    """What a row needs besides its record: its entry, point namespace and key, RANDOM."""

    entry: str
    namespace: str
    point_key: str
    random: dict[str, float]
    shown: str = ""
    """The folder as the profile names it (`evals/climp+choice`)."""

    def point(self, record: dict[str, Any]) -> str | None:
        point = (record.get("meta") or {}).get(self.point_key)
        return f"{self.namespace}:{point}" if point not in (None, "") else None

    def item_row(self, record: dict[str, Any]) -> ItemScore | None:
        """One item's row (None: its record has no headline score)."""
        task = record["task"]
        value = share(task, record.get("scores") or {})
        if value is None:
            return None
        return ItemScore(
            entry=self.entry,
            model=str(record["model"]),
            item_id=str(record["item_id"]),
            task=task,
            score=value,
            random=float(self.random.get(task, 0.0)),
            invalid=float(bool(record.get("invalid"))),
            point=self.point(record),
            answer=record.get("extracted"),
            gold=record.get("gold"),
            folder=self.shown,
            reason=record.get("invalid_reason"),
        )


def _unit_rows(
    where: _Where, model: str, task: str, records: list[dict[str, Any]]
) -> list[ItemScore]:
    """A task aggregated over all its records: one row per unit of its macro average.

    A unit's row is scored as the task's aggregation scores the unit (M2's F0.5 of a grammar
    item over its sentences), its invalid rate is its answers', and a link to it opens its
    first item. Without units (a figure that is no mean over units), one row per item.
    """
    spec = get_task(task)
    assert spec is not None and spec.aggregate is not None
    units = spec.aggregate(records).units
    if not units:
        return [row for r in records if (row := where.item_row(r)) is not None]
    by_unit: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_unit[str((record.get("meta") or {}).get("point"))].append(record)
    rows = []
    for unit, value in units.items():
        members = sorted(by_unit[unit], key=lambda r: (r.get("meta") or {}).get("position", 0))
        points = {where.point(r) for r in members} - {None}
        rows.append(
            ItemScore(
                entry=where.entry,
                model=model,
                item_id=f"{task}/{unit}",
                task=task,
                score=share(task, {spec.headline: value}) or 0.0,
                random=float(where.random.get(task, 0.0)),
                invalid=sum(bool(r.get("invalid")) for r in members) / max(1, len(members)),
                point=points.pop() if len(points) == 1 else None,
                folder=where.shown,
                first_item=str(members[0]["item_id"]) if members else None,
            )
        )
    return rows
