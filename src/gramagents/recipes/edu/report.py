"""EduEval's report section, laid out as the paper's Tables 2-5.

One column per source task (the paper's 1-1 … 6-4, grouped by level; a file no paper task is
named like gets a column of its own under its level), each with the task's own metric on a
0-100 scale: accuracy and ROUGE-L in percent (2-4 and 2-5 marked *), the rubric judge's score
as a percentage of its scale (5-1 … 5-3, marked ‡), and essay scoring's RMSE on the 0-100
score scale (3-5, marked †, lower is better). Average is the mean of a model's columns
**without** the RMSE, as the paper's Averages are (Spark-X1's 81.1 in Table 3 is the mean of
its 23 other columns; with 100 − RMSE it would be 80.1); Rank orders the models by it. Zero-shot
(Tables 2-3) and three-shot (Tables 4-5) are tables of their own, and essay scoring's RMSE,
QWK and Pearson stand side by side below them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...api import RunManifest, Summary, Tally, markdown_table
from .taxonomy import level, levels

SETTINGS = (("zero-shot", "", "Tables 2-3"), ("three-shot", "-3SHOT", "Tables 4-5"))
ESSAY = "EDU-ESSAY"
PERCENT = {"acc": 100.0, "rouge_l": 100.0, "judge_pct": 1.0}
"""A headline metric to its factor onto the 0-100 scale."""
MARKS = {"rouge_l": "*", "judge_pct": "‡", "rmse": "†"}


@dataclass(frozen=True)
class Column:
    """One source task of the table."""

    key: str
    """The items' `task_id`: `1-1` … `6-4`, or `<level folder>/<file>` for other files."""
    group: str
    header: str
    metric: str


def _order(key: str) -> tuple[int, int, str]:
    """Paper ids in the paper's order, then other files by their level, then by name."""
    head, _, tail = key.partition("-")
    if head.isdigit() and tail.isdigit():
        return (int(head), int(tail), "")
    folder = key.split("/", 1)[0]
    try:
        return (level(folder).order, 99, key)
    except Exception:  # noqa: BLE001 - a folder that names no level: last
        return (99, 99, key)


def _column(key: str, metric: str) -> Column:
    order = _order(key)[0]
    group = next((found.name for found in levels() if found.order == order), "Other")
    header = key.rsplit("/", 1)[-1]
    return Column(key, group, f"{header}{MARKS.get(metric, '')}", metric)


def columns(summary: Summary, suffix: str) -> list[Column]:
    """The source tasks some model has a score for in one setting, in the paper's order."""
    found: dict[str, str] = {}
    for (_, task, key), _tally in summary.breakdowns.get("task_id", {}).items():
        if task.endswith(suffix) and task.removesuffix(suffix).startswith("EDU-"):
            if suffix or not task.endswith("SHOT"):
                found[key] = "rmse" if task == ESSAY + suffix else summary.metrics.get(task, "acc")
    return [_column(k, m) for k, m in sorted(found.items(), key=lambda kv: _order(kv[0]))]


def cell(summary: Summary, model: str, suffix: str, column: Column) -> float | None:
    """A model's score of one column on the 0-100 scale (RMSE as it is), or None."""
    if column.metric == "rmse":
        aggregate = summary.aggregates.get((model, ESSAY + suffix))
        return None if aggregate is None else float(aggregate.scores["rmse"])
    pooled = Tally()
    for (who, task, key), tally in summary.breakdowns.get("task_id", {}).items():
        same_setting = task.endswith(suffix) and (suffix or not task.endswith("SHOT"))
        if who == model and key == column.key and same_setting and task != ESSAY + suffix:
            pooled.n += tally.n
            pooled.total += tally.total
    score = pooled.score
    return None if score is None else score * PERCENT.get(column.metric, 100.0)


def _ranks(averages: dict[str, float | None]) -> dict[str, int]:
    """1 for the highest Average; models with equal Averages share a rank."""
    known = sorted((v for v in averages.values() if v is not None), reverse=True)
    return {m: 1 + known.index(v) for m, v in averages.items() if v is not None}


def _fmt(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def paper_table(manifest: RunManifest, summary: Summary, suffix: str) -> list[list[str]] | None:
    """Header and rows of one setting's table (None when the run has none of its tasks)."""
    shown = columns(summary, suffix)
    if not shown:
        return None
    values = {m: [cell(summary, m, suffix, c) for c in shown] for m in manifest.models}
    averages: dict[str, float | None] = {}
    for model, row in values.items():
        kept = [v for v, c in zip(row, shown, strict=True) if v is not None and c.metric != "rmse"]
        averages[model] = sum(kept) / len(kept) if kept else None
    ranks = _ranks(averages)
    header = ["Model", *(f"{c.group} {c.header}" for c in shown), "Average", "Rank"]
    rows = [header]
    for model in sorted(manifest.models, key=lambda m: ranks.get(m, len(ranks) + 1)):
        cells = [
            _fmt(v, 3 if c.metric == "rmse" else 1)
            for v, c in zip(values[model], shown, strict=True)
        ]
        rank = ranks.get(model)
        rows.append([model, *cells, _fmt(averages[model]), "—" if rank is None else str(rank)])
    return rows


def _essay_rows(manifest: RunManifest, summary: Summary) -> list[list[str]]:
    rows = []
    for setting, suffix, _ in SETTINGS:
        for model in manifest.models:
            aggregate = summary.aggregates.get((model, ESSAY + suffix))
            tally = summary.tallies.get((model, ESSAY + suffix))
            if aggregate is None or tally is None:
                continue
            scores = aggregate.scores
            rows.append(
                [
                    model,
                    setting,
                    str(tally.n),
                    _fmt(scores.get("rmse"), 3),
                    _fmt(scores.get("qwk"), 3),
                    _fmt(scores.get("pearson"), 3),
                    _fmt(tally.invalid_rate, 3),
                ]
            )
    return rows


def edu_sections(manifest: RunManifest, summary: Summary) -> list[str]:
    """The EduEval tables of an eval run; nothing when the run has no EduEval task."""
    lines: list[str] = []
    for setting, suffix, tables in SETTINGS:
        rows = paper_table(manifest, summary, suffix)
        if rows is None:
            continue
        lines += [
            f"## EduEval, the paper's {tables} layout: {setting}",
            "",
            "One column per source task, each with its own metric on a 0-100 scale: accuracy "
            "in percent; * ROUGE-L F in percent; ‡ rubric judge score, percent of its scale; "
            "† essay-score RMSE on the 0-100 score scale, lower is better. Average is over "
            "the other columns (the RMSE is shown apart, not averaged, as in the paper); "
            "Rank orders the models by it. — marks a task the run has no score for.",
            "",
            *markdown_table(rows[0], rows[1:]),
            "",
        ]
    essays = _essay_rows(manifest, summary)
    if essays:
        header = ["Model", "setting", "essays", "RMSE", "QWK", "Pearson", "invalid"]
        lines += [
            "### Essay scoring (3-5)",
            "",
            "Predicted against the teachers' scores; an answer without a score counts as 0.",
            "",
            *markdown_table(header, essays),
            "",
        ]
    return lines
