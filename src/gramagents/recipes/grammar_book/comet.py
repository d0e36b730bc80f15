"""COMET scores of the translations, when the user has `unbabel-comet` and a model (optional).

The paper scores translations with COMET (Unbabel's cometkiwi models). Nothing here needs it:
COMET runs only when the package `unbabel-comet` is installed and `GRAMAGENTS_COMET_MODEL`
names a COMET checkpoint on disk (a `.ckpt` file, or a model folder holding
`checkpoints/model.ckpt`, as `comet-score --model` downloads them). Scores are cached in the
run folder by the model file and the exact inputs, so a report refresh recomputes nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

from ...api import write_atomic

ENV = "GRAMAGENTS_COMET_MODEL"


def comet_checkpoint() -> tuple[Path | None, str]:
    """The COMET checkpoint to use, or None and why COMET is not computed."""
    named = os.environ.get(ENV)
    if not named:
        return None, f"not computed: set {ENV} to a COMET checkpoint to add it"
    if importlib.util.find_spec("comet") is None:
        return None, "not computed: the package unbabel-comet is not installed"
    path = Path(named).expanduser()
    if path.is_dir():
        path = path / "checkpoints" / "model.ckpt"
    if not path.is_file():
        return None, f"not computed: no COMET checkpoint at {path}"
    return path, f"COMET checkpoint {path}"


def _key(checkpoint: Path, rows: list[dict[str, str]]) -> str:
    digest = hashlib.sha256(str(checkpoint.resolve()).encode())
    digest.update(json.dumps(rows, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def _load(checkpoint: Path) -> Any:
    from comet import load_from_checkpoint

    return load_from_checkpoint(str(checkpoint))


def _predict(model: Any, rows: list[dict[str, str]]) -> list[float]:
    try:
        import torch

        gpus = 1 if torch.cuda.is_available() else 0
    except ImportError:
        gpus = 0
    output = model.predict(rows, batch_size=16, gpus=gpus, progress_bar=False)
    return [float(s) for s in output.scores]


def comet_scores(
    groups: dict[tuple[str, ...], list[dict[str, str]]], cache_file: Path
) -> tuple[dict[tuple[str, ...], dict[str, float]], str]:
    """Mean and std of sentence COMET per group, and what was done.

    `groups`: per (model, direction) or (model, direction, set), rows of `src`, `mt` and `ref`.
    """
    checkpoint, status = comet_checkpoint()
    if checkpoint is None or not groups:
        return {}, status
    cached: dict[str, list[float]] = {}
    if cache_file.is_file():
        cached = json.loads(cache_file.read_text(encoding="utf-8"))
    results: dict[tuple[str, ...], dict[str, float]] = {}
    model = None  # loaded once, and only when some group is not cached
    for group, rows in groups.items():
        key = _key(checkpoint, rows)
        if key not in cached:
            model = model if model is not None else _load(checkpoint)
            cached[key] = _predict(model, rows)
        scores = cached[key]
        results[group] = {"mean": mean(scores), "std": pstdev(scores)} if scores else {}
    write_atomic(cache_file, json.dumps(cached))
    return results, status


def translation_rows(scores_file: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The translations of an eval run's `scores.jsonl`, per (model, direction)."""
    from ...api import iter_jsonl

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in iter_jsonl(scores_file):
        if record.get("task") != "GB-TRANSLATE":
            continue
        details = record.get("details") or {}
        groups.setdefault((record["model"], str(details.get("direction", "into"))), []).append(
            {
                "id": record["item_id"],
                "src": str(details.get("source", "")),
                "mt": str(details.get("hypothesis", "")),
                "ref": str(details.get("reference", "")),
                "set": str(details.get("set", "G")),
            }
        )
    for rows in groups.values():
        rows.sort(key=lambda r: r["id"])
    return groups
