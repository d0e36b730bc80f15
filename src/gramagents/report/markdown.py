"""`report.md`: the tables a reader of an evaluation run looks at first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..records import EvalManifest, RunManifest
from ..sources.answers import describe_answers
from ..sources.duplicates import describe
from .invalid import reason_lines
from .layouts import LAYOUTS, Layout, column_header
from .mdtext import code_span, md_cell, md_text
from .parts import PartsOfKind
from .summary import Summary, Tally

Section = Callable[[RunManifest, Summary], list[str]]
SECTIONS: PartsOfKind[Section] = PartsOfKind("section")
"""Recipes' own report sections, report parts of kind `section` (markdown lines; none when the
run has nothing of theirs)."""
SECTIONS.announce("pair-methods", "gramagents.report.pair_methods")  # the engine's own


def report_section(name: str, section: Section) -> Section:
    """Register a section of the eval report."""
    return SECTIONS.register(name, section)


FileSection = Callable[[Path, RunManifest, Summary], list[str]]
FILE_SECTIONS: PartsOfKind[FileSection] = PartsOfKind("files")
"""Recipes' report sections that also write files (plots, tables as files) into the run folder
they are given, and return the markdown that shows them (none when the run has nothing of
theirs): report parts of kind `files`."""


def report_files(name: str, section: FileSection) -> FileSection:
    """Register a section of the eval report that writes files into the run folder."""
    return FILE_SECTIONS.register(name, section)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def markdown_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """The lines of a markdown table; cells are text (`md_cell`), so data cannot break it."""
    lines = ["| " + " | ".join(map(md_cell, header)) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(map(md_cell, row)) + " |" for row in rows]


def _score(summary: Summary, model: str, task: str) -> float | None:
    return summary.headline(model, task)


def _scored(summary: Summary, tasks: list[str]) -> list[str]:
    """Tasks some model has a score for (a task without gold answers has none)."""
    return [t for t in tasks if any(task == t for (_, task) in summary.tallies)]


def _random_average(random: dict[str, float], tasks: list[str], summary: Summary) -> float | None:
    columns = _scored(summary, tasks) or tasks
    return _mean([random[t] for t in columns if t in random])


def _paper_table(
    layout: Layout, manifest: RunManifest, summary: Summary, random: dict[str, float]
) -> list[str]:
    columns = list(layout.columns)
    tasks = [c.task for c in columns]
    scored = _scored(summary, tasks)
    mixed = mixed_metrics(summary, scored)
    header = ["Model", *(column_header(c, summary) for c in columns), "Average"]
    randoms = [random.get(t) for t in tasks]
    if mixed:
        baseline = None
    elif layout.average_over == "scored":
        baseline = _random_average(random, tasks, summary)
    else:
        baseline = layout.average(randoms)
    rows = [["RANDOM", *(_fmt(r) for r in randoms), _fmt(baseline)]]
    for model in manifest.models:
        scores = [_score(summary, model, t) for t in tasks]
        average = None if mixed else layout.average(scores)
        rows.append([model, *(_fmt(s) for s in scores), _fmt(average)])
    note = layout.average_note(list(manifest.tasks) or list(random), scored)
    if mixed:
        note = f"No Average: its columns are scored by different metrics ({mixed})."
    return [
        f"## {layout.title}",
        "",
        (f"{layout.note} " if layout.note else "") + note,
        "",
        *markdown_table(header, rows),
        "",
    ]


def mixed_metrics(summary: Summary, tasks: list[str]) -> str:
    """The metrics of `tasks` named with their tasks when there are several, else empty."""
    groups = summary.by_metric(tasks)
    if len(groups) < 2:
        return ""
    return "; ".join(f"{metric}: {', '.join(group)}" for metric, group in groups.items())


def file_sections(folder: Path, manifest: RunManifest, summary: Summary) -> dict[str, list[str]]:
    """Run the sections that write files into the run `folder`: their lines, by name.

    Computed once per report and handed to both the markdown report and the viewer. The
    judges' section of a judged run (judging/jury_report.py) comes first.
    """
    sections: dict[str, list[str]] = {}
    if isinstance(manifest, EvalManifest) and manifest.judge:
        from ..judging.jury_report import judges_section

        sections["judges"] = judges_section(folder, manifest)
    for name, section in FILE_SECTIONS.all().items():
        sections[name] = section(folder, manifest, summary)
    return sections


def render_report(
    manifest: RunManifest,
    summary: Summary,
    tasks: list[str],
    random: dict[str, float],
    files: dict[str, list[str]] | None = None,
) -> str:
    """The markdown report of an evaluation run.

    `files`: the lines of the sections that write files (`file_sections`), where the run
    folder is at hand.
    """
    counts = manifest.counts
    dataset = manifest.dataset or {}
    lines = [
        f"# Evaluation report: {md_text(manifest.run_id)}",
        "",
        f"- dataset: {code_span(dataset.get('path', '?'))} ({dataset.get('items', '?')} items"
        + (f", recipe {md_text(manifest.recipe)}" if manifest.recipe else "")
        + ")",
        *_sample_lines(dataset.get("sample")),
        f"- models: {', '.join(map(md_text, manifest.models))}",
        f"- status: {status_text(manifest)}; {counts.items} answers, {counts.requests_line()}, "
        f"{counts.cache_hits} cache hits, {counts.invalid} invalid, {counts.failed} failed"
        + (f", {counts.not_asked} not asked" if counts.not_asked else ""),
        *_conditioning_lines(manifest.conditioning),
        *(f"- duplicates: {line}" for line in describe(dataset.get("duplicates"))),
        *(f"- {line}" for line in describe_answers(dataset.get("answers"))),
        "",
    ]
    for layout in LAYOUTS.all().values():
        if layout.applies_to(tasks):
            lines += _paper_table(layout, manifest, summary, random)
    for section in SECTIONS.all().values():
        lines += section(manifest, summary)
    for section_lines in (files or {}).values():
        lines += section_lines
    lines += _task_table(manifest, summary, tasks, random)
    lines += reason_lines(summary, manifest.models, tasks)
    lines += _other_metrics(manifest, summary)
    if manifest.no_gold:
        listed = ", ".join(f"{task} {n}" for task, n in manifest.no_gold.items())
        lines += [
            "",
            f"Items without a gold answer (asked and recorded in `responses.jsonl`, "
            f"not scored; give them with `--answers FILE`): {md_text(listed)}.",
        ]
    lines += _breakdowns(manifest, summary, tasks)
    lines.append("")
    return "\n".join(lines)


def status_text(manifest: RunManifest) -> str:
    """`complete`, or `partial` with why the run stopped (a failed run's report says so)."""
    if manifest.status == "complete" or not manifest.reason:
        return manifest.status
    return f"{manifest.status} (stopped: {md_text(manifest.reason)})"


def _sample_lines(sample: dict[str, Any] | None) -> list[str]:
    """How `--limit` sampled the items (workflow/selection.py), when it did."""
    if not sample:
        return []
    limit = sample["limit"]
    return [
        f"- sampled: at most {limit} question{'' if limit == 1 else 's'} per task, "
        f"seed {sample['seed']} ({md_text(sample['method'])})"
    ]


def _conditioning_lines(conditioning: dict[str, str]) -> list[str]:
    """What the minimal pairs' scores were conditioned on (it changes their decisions)."""
    if not conditioning:
        return []
    from ..models.conditioning import DESCRIPTIONS

    tasks = ", ".join(f"{md_text(task)} {code_span(how)}" for task, how in conditioning.items())
    used = "; ".join(
        f"`{how}`: {DESCRIPTIONS.get(how, 'unknown')}" for how in sorted(set(conditioning.values()))
    )
    return [f"- minimal pairs scored with conditioning {tasks} ({used})"]


WIDE_TASKS = 3
"""Above this many tasks, the task table has a row per task instead of two columns each."""


def _task_table(
    manifest: RunManifest, summary: Summary, tasks: list[str], random: dict[str, float]
) -> list[str]:
    groups = summary.by_metric(tasks)
    lines = [
        "## Scores by task",
        "",
        "Each task's headline metric (named with the task), with the share of answers that "
        "could not be read (`invalid`, scored as wrong). RANDOM is the expected score of a "
        "uniform guess on these items. An Average is taken over the tasks of one metric only"
        + (f" (this run has {len(groups)}: {', '.join(groups)})." if len(groups) > 1 else "."),
        "",
    ]
    if len(tasks) > WIDE_TASKS:
        return lines + _task_rows(manifest, summary, tasks, random)
    header = ["model"]
    for task in tasks:
        metric = summary.metrics.get(task, "acc")
        header += [f"{task} {metric}", f"{task} invalid"]
    header += [f"Average {metric}" for metric in groups]
    rows = []
    if random:
        row = ["RANDOM"]
        for task in tasks:
            row += [_fmt(random.get(task)), "—"]
        row += [_fmt(_random_average(random, group, summary)) for group in groups.values()]
        rows.append(row)
    for model in manifest.models:
        row = [model]
        for task in tasks:
            tally = summary.tallies.get((model, task))
            row += [
                _fmt(summary.headline(model, task)),
                _fmt(tally.invalid_rate if tally else None),
            ]
        row += [_fmt(_model_average(summary, model, group)) for group in groups.values()]
        rows.append(row)
    return lines + markdown_table(header, rows)


def _model_average(summary: Summary, model: str, tasks: list[str]) -> float | None:
    """A model's mean headline score over `tasks` (tasks of one metric), those it has."""
    return _mean([h for t in tasks if (h := summary.headline(model, t)) is not None])


def _task_rows(
    manifest: RunManifest, summary: Summary, tasks: list[str], random: dict[str, float]
) -> list[str]:
    """The task table turned: a row per task, so that many tasks still fit a terminal.

    Then an Average row per metric, over the tasks of that metric.
    """
    header = ["task", "metric", *(["RANDOM"] if random else [])]
    for model in manifest.models:
        header += [model, f"{model} invalid"]
    rows = []
    for task in tasks:
        row = [
            task,
            summary.metrics.get(task, "acc"),
            *([_fmt(random.get(task))] if random else []),
        ]
        for model in manifest.models:
            tally = summary.tallies.get((model, task))
            row += [
                _fmt(summary.headline(model, task)),
                _fmt(tally.invalid_rate if tally else None),
            ]
        rows.append(row)
    for metric, group in summary.by_metric(tasks).items():
        average = [
            "Average",
            metric,
            *([_fmt(_random_average(random, group, summary))] if random else []),
        ]
        for model in manifest.models:
            average += [_fmt(_model_average(summary, model, group)), "—"]
        rows.append(average)
    return markdown_table(header, rows)


def _other_metrics(manifest: RunManifest, summary: Summary) -> list[str]:
    others = sorted({(task, metric) for (_, task, metric) in summary.extra})
    if not others:
        return []
    lines = ["", "Other metrics of the items (mean per task):", ""]
    return lines + markdown_table(
        ["model", *(f"{t} {m}" for t, m in others)],
        [
            [
                model,
                *(
                    _fmt(summary.extra[model, t, m].score)
                    if (model, t, m) in summary.extra
                    else "—"
                    for t, m in others
                ),
            ]
            for model in manifest.models
        ],
    )


def _breakdowns(manifest: RunManifest, summary: Summary, tasks: list[str]) -> list[str]:
    lines: list[str] = []
    named = [f"{task} {summary.metrics.get(task, 'acc')}" for task in tasks]
    for key, groups in summary.breakdowns.items():
        values = sorted({value for (_, _, value) in groups}, key=_natural)
        if len(values) < 2:
            continue
        lines += ["", f"## Scores by {md_text(key)}", ""]
        table_rows = []
        for model in manifest.models:
            for value in values:
                cells = [model, value]
                for task in tasks:
                    group: Tally | None = groups.get((model, task, value))
                    cells.append(_fmt(group.score if group else None))
                table_rows.append(cells)
        lines += markdown_table(["model", key, *named], table_rows)
    if lines:
        lines += [
            "",
            "Each task by its own metric, named with it; a task scored over all its items "
            "together (an RMSE, M2's F0.5) is scored so over each group's items.",
        ]
    return lines


def _natural(value: str) -> tuple[int, int | str]:
    return (0, int(value)) if value.isdigit() else (1, value)
