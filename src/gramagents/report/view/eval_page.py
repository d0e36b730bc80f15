"""The overview of eval runs: key facts, score tables, the papers' layouts, charts, agreement."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...records import RunManifest
from ..charts import CHARTS, Figure
from ..invalid import reason_columns, reason_rows
from ..layouts import LAYOUTS, Layout, column_header
from ..markdown import SECTIONS, file_sections, mixed_metrics
from ..summary import Summary
from .markup import Figures, Num, card, facts, inline_images, markdown, table
from .plots import Bar, agreement_scatter, heatmap, task_bars


@dataclass
class EvalRun:
    """An eval run as the overview needs it."""

    key: str
    path: Path
    manifest: RunManifest
    summary: Summary
    sections: dict[str, list[str]] | None = None
    """The lines of its sections that write files, when the report just ran them."""

    @property
    def tasks(self) -> list[str]:
        """The run's tasks in dataset order (the summary's when the manifest has none)."""
        return list(self.manifest.tasks) or sorted({t for _, t in self.summary.tallies})


OPEN_BREAKDOWN = 12
"""Breakdowns with at most this many values are shown open; longer ones folded."""


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _unit(summary: Summary, task: str) -> bool:
    metric = summary.metrics.get(task, "acc")
    return not metric.endswith(("pct", "total", "error", "rmse"))


def score_table(run: EvalRun) -> str:
    """Models × tasks: each headline score with its invalid rate, RANDOM first, the averages.

    An average per metric, over the tasks of that metric only.
    """
    summary, tasks = run.summary, run.tasks
    random = run.manifest.random_baselines
    scored = [t for t in tasks if any(task == t for _, task in summary.tallies)]
    groups = summary.by_metric(tasks)
    header = [
        "model",
        *(f"{t} ({summary.metrics.get(t, 'acc')})" for t in tasks),
        *(f"Average ({metric})" for metric in groups),
    ]
    rows: list[list[object]] = []
    classes = []
    if random:
        rows.append(
            [
                "RANDOM",
                *(Num(random.get(t)) for t in tasks),
                *(
                    Num(_mean(random.get(t) for t in group if t in scored or not scored))
                    for group in groups.values()
                ),
            ]
        )
        classes.append("baseline")
    for model in run.manifest.models:
        cells: list[object] = [model]
        for task in tasks:
            tally = summary.tallies.get((model, task))
            note = f"inv. {tally.invalid_rate:.0%}" if tally and tally.invalid else ""
            cells.append(Num(summary.headline(model, task), shade=_unit(summary, task), note=note))
        cells += [
            Num(_mean(summary.headline(model, t) for t in group)) for group in groups.values()
        ]
        rows.append(cells)
        classes.append("")
    return table(header, rows, name="scores", row_classes=classes)


def invalid_table(run: EvalRun) -> str:
    """Models × tasks: the share of answers that could not be read, each with its reasons."""
    header = ["model", *run.tasks]
    rows = []
    for model in run.manifest.models:
        rows.append(
            [
                model,
                *(
                    Num(t.invalid_rate, digits=1, percent=True, note=_reasons_note(t.reasons))
                    if (t := run.summary.tallies.get((model, task)))
                    else Num(None)
                    for task in run.tasks
                ),
            ]
        )
    return table(header, rows, name="invalid") + reasons_table(run)


def _reasons_note(reasons: Counter[str]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in reasons.most_common() if n)


def reasons_table(run: EvalRun) -> str:
    """Per model and task with invalid answers: how many, and why (empty when none)."""
    rows = reason_rows(run.summary, run.manifest.models, run.tasks)
    if not rows:
        return ""
    header = ["model", "task", "answers", "invalid", *reason_columns(run.summary)]
    return "<h3>Why answers were invalid</h3>" + table(header, rows, name="invalid-reasons")


def layout_table(layout: Layout, run: EvalRun) -> str:
    """A paper's results table, laid out as in the paper (no Average over mixed metrics)."""
    summary, random = run.summary, run.manifest.random_baselines
    tasks = [c.task for c in layout.columns]
    scored = [t for t in tasks if any(task == t for _, task in summary.tallies)]
    mixed = bool(mixed_metrics(summary, scored))
    header = ["Model", *(column_header(c, summary) for c in layout.columns), "Average"]
    randoms = [random.get(t) for t in tasks]
    baseline = (
        _mean(random.get(t) for t in scored or tasks)
        if layout.average_over == "scored"
        else layout.average(randoms)
    )
    rows: list[list[object]] = [
        ["RANDOM", *(Num(r) for r in randoms), Num(None if mixed else baseline)]
    ]
    for model in run.manifest.models:
        scores = [summary.headline(model, t) for t in tasks]
        average = None if mixed else layout.average(scores)
        rows.append([model, *(Num(s, shade=True) for s in scores), Num(average)])
    return table(header, rows, name=f"layout:{layout.title}", row_classes=["baseline"])


def breakdown_tables(run: EvalRun) -> str:
    """Per breakdown key (category, level, ...): every value × task, per model, folded."""
    parts = []
    for key, groups in run.summary.breakdowns.items():
        values = sorted({value for (_, _, value) in groups}, key=_natural)
        if len(values) < 2:
            continue
        rows = []
        for model in run.manifest.models:
            for value in values:
                cells: list[object] = [model, value]
                for task in run.tasks:
                    tally = groups.get((model, task, value))
                    cells.append(
                        Num(tally.score if tally else None, shade=_unit(run.summary, task))
                    )
                rows.append(cells)
        shown = " open" if len(values) <= OPEN_BREAKDOWN else ""  # levels open, categories not
        parts.append(
            f"<details{shown}><summary>Scores by {key} ({len(values)} values)</summary>"
            + table(["model", key, *_named(run)], rows, name=f"by:{key}")
            + "</details>"
        )
    return "".join(parts)


def _named(run: EvalRun) -> list[str]:
    """The tasks as column headers, each with its metric (`EDU-ESSAY (rmse)`)."""
    return [f"{t} ({run.summary.metrics.get(t, 'acc')})" for t in run.tasks]


def _natural(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def other_metrics(run: EvalRun) -> str:
    """Every metric the items have besides the headline, per model and task."""
    others = sorted({(task, metric) for (_, task, metric) in run.summary.extra})
    if not others:
        return ""
    rows = [
        [
            model,
            *(
                Num(t.score if (t := run.summary.extra.get((model, k, m))) else None)
                for k, m in others
            ),
        ]
        for model in run.manifest.models
    ]
    return table(["model", *(f"{t} {m}" for t, m in others)], rows, name="other-metrics")


def bars_of(runs: list[EvalRun]) -> list[Bar]:
    """A bar per (model, task), with a value per seed.

    The seeds are those a run breaks its scores down by (`seed` in the items' metadata), or
    the runs given of the same model and task (runs that differ by seed).
    """
    bars: dict[tuple[str, str], Bar] = {}
    for run in runs:
        seeds = run.summary.breakdowns.get("seed", {})
        for (model, task), tally in run.summary.tallies.items():
            bar = bars.setdefault(
                (model, task), Bar(task, model, run.summary.metrics.get(task, "acc"))
            )
            per_seed = [t.score for (m, k, _), t in seeds.items() if (m, k) == (model, task)]
            if len(per_seed) > 1:
                bar.values += [s for s in per_seed if s is not None]
            else:
                score = run.summary.headline(model, task)
                if score is not None:
                    bar.values.append(score)
            bar.invalid_rate = tally.invalid_rate
            bar.n += tally.n
    return list(bars.values())


def heatmaps(run: EvalRun) -> list[Figure]:
    """Models × the values of each breakdown key, one heatmap per key and headline metric."""
    figures = []
    several = len(run.manifest.models) > 1
    for key, groups in run.summary.breakdowns.items():
        if key == "seed":
            continue
        by_metric: dict[str, list[dict[str, object]]] = {}
        for (model, task, value), tally in groups.items():
            metric = run.summary.metrics.get(task, "acc")
            by_metric.setdefault(metric, []).append(
                {
                    "series": f"{task} · {model}" if several else task,
                    "value": value,
                    "score": tally.score,
                    "invalid": tally.invalid_rate,
                    "n": tally.n,
                    "_order": (run.tasks.index(task) if task in run.tasks else 99, model),
                }
            )
        for metric, rows in by_metric.items():
            rows.sort(key=lambda r: r.pop("_order"))  # type: ignore[arg-type, return-value]
            figure = heatmap(key, rows, metric)
            if figure is not None:
                figures.append(figure)
    return figures


def agreement(run: EvalRun, figures: Figures) -> str:
    """`gramagents agree`'s statistics and the judge-vs-human scatter, when the run has them."""
    path = run.path / "agreement.json"
    if not path.is_file():
        return ""
    report = json.loads(path.read_text(encoding="utf-8"))
    body = ""
    md = run.path / "agreement.md"
    if md.is_file():
        text = md.read_text(encoding="utf-8")
        kept = [line for line in text.splitlines()[1:] if not line.startswith("![")]
        body += markdown(kept)
    scatter = agreement_scatter(report)
    if scatter is not None:
        body = f'<div class="split">{figures.html(scatter)}<div>{body}</div></div>'
    return card("Judge-human agreement", body, anchor=f"{run.key}-agreement")


def run_facts(run: EvalRun) -> str:
    """Dataset, models, status and counts."""
    manifest, counts = run.manifest, run.manifest.counts
    dataset = manifest.dataset or {}
    judge = manifest.judge or {}
    return facts(
        [
            ("status", manifest.status),
            ("dataset", f"{dataset.get('path', '?')} ({dataset.get('format', 'gramagents')})"),
            ("recipe", manifest.recipe),
            ("models", ", ".join(manifest.models)),
            ("answers", counts.items),
            ("requests sent", counts.requests_sent),
            ("identical prompts asked once", counts.shared or None),
            ("cache hits", counts.cache_hits),
            ("invalid", counts.invalid),
            ("failed", counts.failed),
            ("not asked", counts.not_asked or None),
            ("judge", judge.get("model")),
            ("started", manifest.started),
            ("finished", manifest.finished),
        ]
    )


def eval_overview(run: EvalRun, figures: Figures) -> str:
    """The overview of one eval run."""
    manifest, summary = run.manifest, run.summary
    parts = [
        card(
            "Scores by task",
            score_table(run),
            "Each task's headline metric; the note is the share of answers that could not be "
            "read (scored as wrong). RANDOM is the expected score of a uniform guess.",
        )
    ]
    for layout in LAYOUTS.all().values():
        if layout.applies_to(run.tasks):
            parts.append(
                card(
                    layout.title,
                    layout_table(layout, run),
                    (f"{layout.note} " if layout.note else "")
                    + layout.average_note(
                        run.tasks,
                        [t for t in run.tasks if any(k == t for _, k in summary.tallies)],
                    ),
                )
            )
    for name, section in SECTIONS.all().items():
        lines = section(manifest, summary)
        if lines:
            parts.append(
                f'<section class="card md" data-section="{name}">{markdown(lines)}</section>'
            )
    files = run.sections
    if files is None:  # the report did not just run them: their files are written in the run
        files = file_sections(run.path, manifest, summary)
    for name, lines in files.items():
        if lines:
            html = inline_images(markdown(lines), run.path)
            parts.append(f'<section class="card md" data-section="{name}">{html}</section>')
    charts = task_bars(bars_of([run]), manifest.random_baselines, run.tasks)
    charts += heatmaps(run)
    for maker in CHARTS.all().values():
        charts += maker(manifest, summary)
    if charts:
        parts.append(card("Charts", "".join(figures.html(f) for f in charts)))
    parts.append(agreement(run, figures))
    extra = other_metrics(run)
    folded = breakdown_tables(run)
    tail = invalid_table(run) + (("<h3>Other metrics</h3>" + extra) if extra else "")
    if folded:
        parts.append(card("Breakdowns", folded, "Each task's headline score per value."))
    parts.append(card("Invalid answers and other metrics", tail))
    if manifest.no_gold:
        listed = ", ".join(f"{task} {n}" for task, n in manifest.no_gold.items())
        parts.append(
            card("Items without gold", f"<p>Asked and recorded but not scored: {listed}.</p>")
        )
    return run_facts(run) + "".join(parts)


def comparison(runs: list[EvalRun], figures: Figures) -> str:
    """Every (run, model) against every task, and the bars of all runs together."""
    tasks: list[str] = []
    for run in runs:
        tasks += [t for t in run.tasks if t not in tasks]
    rows = []
    for run in runs:
        for model in run.manifest.models:
            cells: list[object] = [run.manifest.run_id, model]
            for task in tasks:
                tally = run.summary.tallies.get((model, task))
                note = f"inv. {tally.invalid_rate:.0%}" if tally and tally.invalid else ""
                cells.append(Num(run.summary.headline(model, task), shade=True, note=note))
            rows.append(cells)
    random: dict[str, float] = {}
    for run in runs:
        random.update({k: v for k, v in run.manifest.random_baselines.items() if k not in random})
    bars = bars_of(runs)
    spread = [b for b in bars if len(b.values) > 1]
    note = (
        f"{len(spread)} model–task pairs appear in several runs: the chart shows their mean "
        "and standard deviation."
        if spread
        else ""
    )
    chart = "".join(figures.html(f) for f in task_bars(bars, random, tasks))
    return card(
        "Runs side by side",
        table(["run", "model", *tasks], rows, name="comparison") + chart,
        note,
    )
