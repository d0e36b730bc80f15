"""Aggregate `scores.jsonl` into `summary.json` rows and breakdowns, streaming the file.

Most tasks are the mean of their items' scores (every metric an item has, the task's headline
first). Tasks with their own aggregation (M2 scoring of corrections) keep their records, which
are few, and compute their scores from all of them at the end.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import ScoreRecord, SummaryRow
from ..runtime.rundir import iter_jsonl
from ..tasks import TaskSpec, get_task
from ..tasks.registry import Aggregate

DEFAULT_BREAKDOWNS = ("category", "level", "language")

ScoreEntry = tuple[
    str, str, dict[str, float], bool, str | None, dict[str, Any], dict[str, Any] | None
]
"""A score record as `SummaryBuilder.entry` keeps it: model, task, scores, invalid, why it is
invalid, meta and, for tasks that aggregate their own records, the record."""
UNRECORDED = "unrecorded"
"""The reason counted for an invalid answer whose record gives none (written before reasons
were recorded)."""


@dataclass
class Tally:
    """Running sums for one group of scores."""

    n: int = 0
    total: float = 0.0
    invalid: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    """Why answers were invalid (`echo`, `refusal`, ...), with how many each."""
    aggregated: float | None = None
    """The group's score as its task scores all its items together (an RMSE, M2's macro
    F0.5), for tasks that aggregate their own records: the mean of the items' scores is no
    score of theirs."""

    def add(self, value: float, invalid: bool, reason: str | None = None) -> None:
        """Count one item (`reason`: why its answer is invalid, when it is)."""
        self.n += 1
        self.total += value
        if invalid:
            self.invalid += 1
            self.reasons[reason or UNRECORDED] += 1

    @property
    def score(self) -> float | None:
        """The group's score: its task's aggregate where it has one, else the mean.

        None for an empty group.
        """
        if self.aggregated is not None:
            return self.aggregated
        return self.total / self.n if self.n else None

    @property
    def invalid_rate(self) -> float:
        """Share of items whose answer could not be read."""
        return self.invalid / self.n if self.n else 0.0


@dataclass
class Summary:
    """Headline scores per (model, task), other metrics, breakdowns and task aggregates."""

    tallies: dict[tuple[str, str], Tally] = field(default_factory=dict)
    """(model, task) to the tally of the headline metric."""
    metrics: dict[str, str] = field(default_factory=dict)
    """Task to the metric its headline score is."""
    extra: dict[tuple[str, str, str], Tally] = field(default_factory=dict)
    """(model, task, metric) to the tally of every other metric the items have."""
    breakdowns: dict[str, dict[tuple[str, str, str], Tally]] = field(default_factory=dict)
    """Attribute (e.g. `category`) to (model, task, value) to tally."""
    aggregates: dict[tuple[str, str], Aggregate] = field(default_factory=dict)
    """(model, task) to the scores of tasks that aggregate their own records."""
    sizes: dict[str, set[int]] = field(default_factory=dict)
    """Task to the numbers of sub-questions its items have (`meta.n`: the sentences of a
    batch), for headers that state them."""

    def rows(self, models: Sequence[str] = (), tasks: Sequence[str] = ()) -> list[SummaryRow]:
        """The rows of `summary.json`: one per (model, task, metric).

        In the order of `models` and `tasks` (a run's manifest), not the order the answers
        came in: a model that answers chunks out of order writes the same summary. What
        neither lists follows, in the order it was counted.
        """
        rank_model = {m: i for i, m in enumerate(models)}
        rank_task = {t: i for i, t in enumerate(tasks)}
        keys = sorted(
            self.tallies,
            key=lambda k: (
                rank_model.get(k[0], len(rank_model)),
                rank_task.get(k[1], len(rank_task)),
            ),
        )  # stable: the unlisted keep their counted order
        rows = []
        for model, task in keys:
            tally = self.tallies[model, task]
            aggregate = self.aggregates.get((model, task))
            if aggregate is not None:
                rows += [_row(model, task, m, v, tally) for m, v in aggregate.scores.items()]
                continue
            rows.append(_row(model, task, self.metrics[task], tally.score, tally))
            rows += [
                _row(model, task, metric, t.score, t)
                for (m, k, metric), t in self.extra.items()
                if (m, k) == (model, task)
            ]
        return rows

    def by_metric(self, tasks: Sequence[str]) -> dict[str, list[str]]:
        """`tasks` grouped by their headline metric, metrics in the order tasks first name them.

        An average is taken within one group only: accuracy and an RMSE, or accuracy and a
        judge's percentage, are numbers on different scales.
        """
        groups: dict[str, list[str]] = {}
        for task in tasks:
            groups.setdefault(self.metrics.get(task, "acc"), []).append(task)
        return groups

    def headline(self, model: str, task: str) -> float | None:
        """The task's headline score for a model (its aggregate's, when it has one)."""
        aggregate = self.aggregates.get((model, task))
        if aggregate is not None:
            return next(iter(aggregate.scores.values()), None)
        tally = self.tallies.get((model, task))
        return tally.score if tally else None


def _row(model: str, task: str, metric: str, score: float | None, tally: Tally) -> SummaryRow:
    return SummaryRow(
        model=model,
        task=task,
        n=tally.n,
        metric=metric,
        score=score,
        invalid_rate=tally.invalid_rate,
    )


def headline_metric(spec: TaskSpec | None, scores: dict[str, float]) -> str:
    """The metric a task is summarised by (the task's own, else the item's first)."""
    if spec is not None and (spec.headline in scores or spec.aggregate is not None):
        return spec.headline
    return next(iter(scores), "acc")


class SummaryBuilder:
    """Aggregates score records one at a time: from `scores.jsonl`, or as an eval writes them."""

    def __init__(self) -> None:
        self._metrics: dict[str, str] = {}
        self._tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
        self._extra: dict[tuple[str, str, str], Tally] = defaultdict(Tally)
        self._breakdowns: dict[str, dict[tuple[str, str, str], Tally]] = defaultdict(
            lambda: defaultdict(Tally)
        )
        self._kept: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self._kept_groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
        """(key, model, task, value) to the records of one breakdown group of a task that
        aggregates its own records."""
        self._sizes: dict[str, set[int]] = defaultdict(set)
        self._specs: dict[str, TaskSpec | None] = {}

    def _spec(self, task: str) -> TaskSpec | None:
        if task not in self._specs:
            self._specs[task] = get_task(task)
        return self._specs[task]

    def add(self, record: dict[str, Any]) -> None:
        """Count one record of `scores.jsonl` (a record without scores has no gold: skipped)."""
        scores = record.get("scores") or {}
        if not scores:
            return
        self._add(
            (
                record["model"],
                record["task"],
                scores,
                bool(record.get("invalid")),
                record.get("invalid_reason"),
                record.get("meta") or {},
                record,
            )
        )

    def add_score(self, score: ScoreRecord) -> None:
        """Count one score record as it is written."""
        entry = self.entry(score)
        if entry is not None:
            self.add_entries([entry])

    def entry(self, score: ScoreRecord) -> ScoreEntry | None:
        """What counting `score` takes, kept without the record itself (None: nothing to count).

        For a caller that makes many records and counts them later (once they are written):
        the record can go as soon as it is serialised. Tasks that aggregate their own records
        keep the record's JSON form.
        """
        if not score.scores:
            return None
        spec = self._spec(score.task)
        record = score.model_dump(mode="json") if spec and spec.aggregate is not None else None
        return (
            score.model,
            score.task,
            score.scores,
            score.invalid,
            score.invalid_reason,
            score.meta,
            record,
        )

    def add_entries(self, entries: list[ScoreEntry]) -> None:
        """Count entries made by `entry`, in order."""
        for entry in entries:
            self._add(entry)

    def _add(self, entry: ScoreEntry) -> None:
        """Count one score; its record (JSON form) is kept for tasks that aggregate records.

        A plain tuple rather than a named one: this runs once per item, and building a named
        tuple costs several times what building a tuple does.
        """
        model, task, scores, invalid, reason, meta, record = entry
        spec = self._spec(task)
        metric = self._metrics.get(task)
        if metric is None:
            metric = self._metrics[task] = headline_metric(spec, scores)
        value = float(scores.get(metric, 0.0))
        self._tallies[model, task].add(value, invalid, reason)
        aggregated = spec is not None and spec.aggregate is not None
        if aggregated:
            assert record is not None, f"{task}: aggregated, but its record was not kept"
            self._kept[model, task].append(record)  # scored by the task's aggregation
        else:
            for other, other_value in scores.items():
                if other != metric:
                    self._extra[model, task, other].add(float(other_value), invalid, reason)
        size = meta.get("n")
        if type(size) is int:
            self._sizes[task].add(size)
        for key in spec.breakdowns if spec else DEFAULT_BREAKDOWNS:
            if meta.get(key) is not None:
                self._breakdowns[key][model, task, str(meta[key])].add(value, invalid, reason)
                if aggregated:
                    self._kept_groups[key, model, task, str(meta[key])].append(record)

    def summary(self) -> Summary:
        """The summary of everything added so far (adding more afterwards is fine)."""
        result = Summary(
            tallies=dict(self._tallies),
            metrics=dict(self._metrics),
            extra=dict(self._extra),
            breakdowns={k: dict(v) for k, v in self._breakdowns.items() if v},
            sizes={task: set(sizes) for task, sizes in self._sizes.items()},
        )
        for (model, task), records in self._kept.items():
            spec = self._specs[task]
            assert spec is not None and spec.aggregate is not None
            result.aggregates[model, task] = spec.aggregate(records)
            result.tallies[model, task].aggregated = _headline(result.aggregates[model, task])
        for (key, model, task, value), records in self._kept_groups.items():
            spec = self._specs[task]
            assert spec is not None and spec.aggregate is not None
            tally = result.breakdowns[key][model, task, value]
            tally.aggregated = _headline(spec.aggregate(records))
        return result


def _headline(aggregate: Aggregate) -> float | None:
    """An aggregate's headline score (its first)."""
    return next(iter(aggregate.scores.values()), None)


def summarize(scores_path: Path) -> Summary:
    """Read `scores.jsonl` once and aggregate it."""
    builder = SummaryBuilder()
    for record in iter_jsonl(scores_path):
        builder.add(record)
    return builder.summary()
