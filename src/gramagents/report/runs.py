"""Run reports: written when a command finishes (`Run.finish`), refreshed by `gramagents report`.

`gramagents report A B` (runs side by side) builds on these: profiles/compare.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..records import EvalManifest, ProfileManifest, RunManifest
from ..runtime.run import Run
from .build import render_build_report
from .markdown import file_sections, render_report
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
        from .profile import read_profile, render_profile

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
