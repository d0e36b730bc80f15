"""Paired comparison of the models of several run folders (`gramagents report A B`).

Eval folders are joined item by item on their item ids (the same dataset evaluated twice);
profile folders on their entries' item ids, and their competences come from the suite of the
first profile. A model named in more than one folder is told apart by its folder's name.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..records import EvalManifest, ProfileManifest
from ..report.markdown import markdown_table
from ..report.mdtext import code_span
from ..report.profile import paired_lines
from ..report.runs import refresh_report
from ..runtime.run import read_manifest
from .compute import Settings, paired
from .scores import ItemScore, read_entry


def _rows_of(folder: Path) -> tuple[list[ItemScore], dict[str, str] | None]:
    manifest = read_manifest(folder)
    if isinstance(manifest, EvalManifest):
        return read_entry(folder, "", "", set(manifest.tasks)), None
    if isinstance(manifest, ProfileManifest) and manifest.suite is not None:
        competences: dict[str, list[str]] = manifest.suite.get("competences", {})
        competence_of = {t: c for c, tasks in competences.items() for t in tasks}
        rows: list[ItemScore] = []
        for name, entry in manifest.entries.items():
            for done in entry.get("evals", [entry]):
                if done.get("eval"):
                    rows += read_entry(
                        folder / done["eval"],
                        name,
                        entry.get("points", name),
                        set(competence_of),
                        entry.get("point_key", "point"),
                    )
        return rows, competence_of
    return [], None


def _renamed(row: ItemScore, model: str) -> ItemScore:
    return dataclasses.replace(row, model=model)


def compare_folders(folders: list[Path], settings: Settings | None = None) -> list[dict[str, Any]]:
    """The paired comparisons (compute.paired) of every model of `folders` against every other."""
    loaded = [(folder, *_rows_of(folder)) for folder in folders]
    counts: dict[str, int] = {}
    for _, rows, _ in loaded:
        for model in {r.model for r in rows}:
            counts[model] = counts.get(model, 0) + 1
    rows_all: list[ItemScore] = []
    order: list[str] = []
    competence_of: dict[str, str] | None = None
    for folder, rows, competences in loaded:
        if competence_of is None:
            competence_of = competences
        for row in rows:
            name = row.model if counts[row.model] == 1 else f"{folder}/{row.model}"
            rows_all.append(_renamed(row, name))
            if name not in order:
                order.append(name)
    if competence_of is not None:
        rows_all = [r for r in rows_all if r.task in competence_of]
    return paired(rows_all, competence_of, settings or Settings(), order)


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
    comparisons = [c for c in compare_folders(runs) if c["n"] or c.get("refused")]
    return "\n".join(paired_lines(comparisons)) + "\n" if comparisons else ""
