"""Items' scores as a profile pools them: one row per (entry, model, item) from eval folders.

Every task's headline score is read as a share of [0, 1] (`judge_pct` and other `_pct`
metrics are divided by 100); an invalid answer counts with the score its task gave it (0 for
every shipped task). An item's RANDOM is its task's mean random baseline as the eval recorded
it (`manifest.random_baselines`); a task without one (correction scored by F0.5, judged
teaching tasks) counts with RANDOM 0, since a random guess scores nothing on them.
"""

from __future__ import annotations

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
    invalid: bool
    point: str | None
    """`namespace:point`, the id items are joined by across entries; None when it has none."""
    answer: Any = None
    gold: Any = None
    folder: str = ""
    """The eval folder (relative to the profile) whose records hold it."""
    reason: str | None = None
    """Why the answer is invalid (`refusal`, `no-answer`, ...), when it is."""

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

    An item's grammar point is `namespace:` and its score record's `meta[point_key]`.
    """
    manifest = read_manifest(folder)
    random = manifest.random_baselines if isinstance(manifest, EvalManifest) else {}
    rows: dict[tuple[str, str, str], ItemScore] = {}
    path = folder / "scores.jsonl"
    if not path.is_file():
        return []
    for record in iter_jsonl(path, skip_unreadable=True):
        task = record.get("task")
        if task not in tasks:
            continue
        value = share(task, record.get("scores") or {})
        if value is None:
            continue
        point = (record.get("meta") or {}).get(point_key)
        row = ItemScore(
            entry=entry,
            model=str(record["model"]),
            item_id=str(record["item_id"]),
            task=task,
            score=value,
            random=float(random.get(task, 0.0)),
            invalid=bool(record.get("invalid")),
            point=f"{namespace}:{point}" if point not in (None, "") else None,
            answer=record.get("extracted"),
            gold=record.get("gold"),
            folder=shown,
            reason=record.get("invalid_reason"),
        )
        rows[row.model, task, row.item_id] = row
    return list(rows.values())
