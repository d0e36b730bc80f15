"""Datasets shared as Parquet or as a Hugging Face `datasets` folder (`gramagents export`).

One row per item, in these columns (strings; the last three hold JSON, because their shape
differs from task to task and a table column has one type):

| column | holds |
| --- | --- |
| `id` | the item's id |
| `task` | its task (bank) name |
| `template` | the prompt template, e.g. `cpg/single.zh.md` |
| `vars` | JSON object: the variables the template is rendered with |
| `answer` | JSON: the gold answer (`null` when there is none) |
| `meta` | JSON object: grammar point, level, language, provenance, ... |

`gramagents eval FOLDER` reads such a folder (`--format parquet` or `hf`, or found by itself
from its files): Parquet files under `data/` (or anywhere below the folder), or the files of
`Dataset.save_to_disk`. pyarrow and datasets are imported only here, when one is read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from ..extras import require
from ..records import Item
from .datasets import Dataset, dataset_format

COLUMNS = ("id", "task", "template", "vars", "answer", "meta")
JSON_COLUMNS = ("vars", "answer", "meta")
EXPORT_INFO = "gramagents.json"
"""The export's own record in the folder: the build manifest and the data files' hashes."""


def item_row(item: Item) -> dict[str, str]:
    """The table row of an item."""
    return {
        "id": item.id,
        "task": item.task,
        "template": item.prompt.template,
        "vars": _dumps(item.prompt.vars),
        "answer": _dumps(item.answer),
        "meta": _dumps(item.meta),
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def row_item(row: dict[str, Any], path: Path, number: int) -> Item:
    """The item of table row `number` (1-based); a bad row names its file, row and column."""
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise InputError(path, f"no column '{missing[0]}' (expected: {', '.join(COLUMNS)})")
    parsed: dict[str, Any] = {}
    for column in JSON_COLUMNS:
        try:
            parsed[column] = json.loads(row[column]) if row[column] is not None else None
        except (TypeError, json.JSONDecodeError) as exc:
            raise InputError(path, f"row {number}: not JSON ({exc})", field=column) from None
    try:
        return Item.model_validate(
            {
                "id": row["id"],
                "task": row["task"],
                "prompt": {"template": row["template"], "vars": parsed["vars"] or {}},
                "answer": parsed["answer"],
                "meta": parsed["meta"] or {},
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        raise InputError(path, f"row {number}: {error['msg']}", field=where) from None


def looks_exported(folder: Path) -> bool:
    """Whether a folder holds an exported dataset rather than a build run."""
    return folder.is_dir() and (
        (folder / EXPORT_INFO).is_file()
        or (folder / "state.json").is_file()
        or any(folder.rglob("*.parquet"))
    )


def _digest(files: list[Path]) -> str:
    sha = hashlib.sha256()
    for file in files:
        sha.update(file.read_bytes())
    return sha.hexdigest()


def _info(folder: Path, fmt: str) -> dict[str, Any]:
    """What the export's own record says about where the items came from."""
    info: dict[str, Any] = {"format": fmt}
    record = folder / EXPORT_INFO
    if record.is_file():
        try:
            build = json.loads(record.read_text(encoding="utf-8")).get("build") or {}
        except (json.JSONDecodeError, AttributeError) as exc:
            raise InputError(record, f"not a JSON object ({exc})") from None
        info.update(build_run=build.get("run_id"), recipe=build.get("recipe"))
    return info


def _items(rows: list[dict[str, Any]], path: Path) -> list[Item]:
    items: list[Item] = []
    first: dict[str, int] = {}
    for number, row in enumerate(rows, start=1):
        item = row_item(row, path, number)
        if item.id in first:
            raise InputError(
                path, f"row {number}: duplicate id '{item.id}' (first in row {first[item.id]})"
            )
        first[item.id] = number
        items.append(item)
    if not items:
        raise InputError(path, "no items")
    return items


@dataset_format("parquet")
def read_parquet(folder: Path) -> Dataset:
    """Items from the Parquet files of a folder (or one Parquet file), in file-name order."""
    require("export", "reading Parquet files")
    import pyarrow.parquet as pq

    files = [folder] if folder.is_file() else sorted(folder.rglob("*.parquet"))
    if not files:
        raise InputError(folder, "no .parquet files in this folder")
    rows: list[dict[str, Any]] = []
    for file in files:
        try:
            rows.extend(pq.read_table(file).to_pylist())
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors differ by cause
            raise InputError(file, f"cannot read as Parquet ({_first_line(exc)})") from None
    path = files[0] if len(files) == 1 else folder
    base = folder if folder.is_dir() else folder.parent
    return Dataset(
        path=folder, items=_items(rows, path), digest=_digest(files), info=_info(base, "parquet")
    )


@dataset_format("hf")
def read_hf(folder: Path) -> Dataset:
    """Items from a folder written by `datasets.Dataset.save_to_disk`."""
    require("export", "reading exported folders")
    if not (folder / "state.json").is_file():
        raise InputError(folder, "no state.json: not a folder written by save_to_disk")
    from datasets import load_from_disk

    try:
        loaded = load_from_disk(str(folder))
    except Exception as exc:  # noqa: BLE001 - datasets' errors differ by cause
        raise InputError(folder, f"cannot load with datasets ({_first_line(exc)})") from None
    if not hasattr(loaded, "to_list"):  # a DatasetDict: one split is expected
        raise InputError(folder, f"holds several splits ({', '.join(loaded)}); export one")
    files = sorted(folder.glob("*.arrow"))
    return Dataset(
        path=folder,
        items=_items(loaded.to_list(), folder),
        digest=_digest(files),
        info=_info(folder, "hf"),
    )


def read_exported(folder: Path) -> Dataset:
    """An exported folder, whichever way it was written."""
    return read_hf(folder) if (folder / "state.json").is_file() else read_parquet(folder)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
