"""`gramagents report RUN...`: refresh run reports and compare runs side by side.

Also the reports every command that changes a run's records writes when it finishes
(`Run.finish`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..records import EvalManifest, ProfileManifest, RunManifest
from ..runtime.run import Run
from .build import render_build_report
from .markdown import file_sections, markdown_table, render_report
from .mdtext import code_span
from .summary import Summary, summarize


def write_reports(
    folder: Run, manifest: RunManifest, summary: Summary | None = None
) -> tuple[Summary | None, dict[str, list[str]] | None]:
    """A run's reports: an eval's `summary.json` and `report.md`, a build's `report.md`.

    Returns an eval's summary and the lines of its sections that write files (for the viewer),
    as `write_eval_report` does; nothing for a build.
    """
    if isinstance(manifest, EvalManifest):
        return write_eval_report(folder, manifest, summary)
    if isinstance(manifest, ProfileManifest):
        from ..profile.markdown import read_profile, render_profile

        data = read_profile(folder.path)
        if data is not None:
            folder.write_text("report.md", render_profile(manifest, data))
        return None, None
    folder.write_text("report.md", render_build_report(manifest, folder.path))
    return None, None


def write_eval_report(
    folder: Run, manifest: EvalManifest, summary: Summary | None = None
) -> tuple[Summary, dict[str, list[str]]]:
    """Write an eval run's `summary.json` and `report.md` (the viewer writes `report.html`).

    From `summary` when the caller aggregated the records as it wrote them, else from
    `scores.jsonl`. Returns the summary and the lines of the sections that write files, for
    the viewer to show without running them again.
    """
    if summary is None:
        summary = summarize(folder.file("scores.jsonl"))
    tasks = list(manifest.tasks) or sorted({task for _, task in summary.tallies})
    rows = [r.model_dump(mode="json") for r in summary.rows(list(manifest.models), tasks)]
    folder.write_text("summary.json", json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    files = file_sections(folder.path, manifest, summary)
    folder.write_text(
        "report.md",
        render_report(manifest, summary, tasks, manifest.random_baselines, files),
    )
    return summary, files


def refresh_report(run: Path, view: bool = True) -> tuple[Path, RunManifest, Summary | None]:
    """Rewrite a run's summary, report and viewer from its records and manifest."""
    with Run.existing(run) as folder:
        manifest = folder.found
        assert manifest is not None  # Run.existing reads it or stops
        summary, files = write_reports(folder, manifest)
        if view:
            from .view import refresh_view

            refresh_view(folder.path, summary=summary, sections=files)
    return folder.file("report.md"), manifest, summary


def compare_runs(runs: list[Path]) -> str:
    """A markdown table of every (run, model) against every task of the given eval runs.

    A build run has no answers to put beside others: one line names those left out.
    """
    entries = []
    tasks: list[str] = []
    builds: list[Path] = []
    for run in runs:
        _, manifest, summary = refresh_report(run, view=False)
        if manifest.kind == "build":
            builds.append(run)
        if summary is None:
            continue
        for task in manifest.tasks:
            if task not in tasks:
                tasks.append(task)
        entries.append((manifest, summary))
    left_out = _left_out(builds)
    if not entries:
        return left_out + (_paired(runs) or "No eval or profile runs among the folders given.\n")
    rows: list[list[str]] = []
    for manifest, summary in entries:
        for model in manifest.models:
            cells = []
            for task in tasks:
                tally = summary.tallies.get((model, task))
                score = summary.headline(model, task)
                cells.append(
                    "—"
                    if tally is None or score is None
                    else f"{score:.3f} ({tally.invalid_rate:.2f} inv.)"
                )
            rows.append([manifest.run_id, model, *cells])
    table = "\n".join(markdown_table(["run", "model", *tasks], rows)) + "\n"
    return left_out + table + _paired(runs)


def _left_out(builds: list[Path]) -> str:
    """The line naming the build runs left out of a comparison (none: nothing)."""
    if not builds:
        return ""
    named = ", ".join(code_span(str(run)) for run in builds)
    return (
        f"Left out: {named} (build runs hold no answers to put side by side with eval or "
        "profile runs; `gramagents report` one alone shows its report).\n\n"
    )


def _paired(runs: list[Path]) -> str:
    """The paired comparison of the runs' models on their shared items, if any."""
    from ..profile.compare import compare_folders
    from ..profile.markdown import paired_lines

    comparisons = [c for c in compare_folders(runs) if c["n"] or c.get("refused")]
    return "\n".join(paired_lines(comparisons)) + "\n" if comparisons else ""
