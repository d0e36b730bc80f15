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
            if entry.get("eval"):
                rows += read_entry(
                    folder / entry["eval"],
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
