"""Datasets to evaluate: our own `dataset.jsonl` (or a build run folder), and registered formats.

`gramagents eval DATASET --format NAME` picks a reader; readers for published benchmark
files register themselves here under their format name. A folder written by
`gramagents export` (Parquet or a Hugging Face `datasets` folder, sources/exported.py) is
read as it is, by its own format or by the default one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import from_json

from ..errors import InputError
from ..plugins import Registry
from ..records import Item
from ..runtime.memory import collector_paused
from . import _text
from .duplicates import RepeatedIds


@dataclass
class Dataset:
    """Items to evaluate and where they came from."""

    path: Path
    items: list[Item]
    digest: str
    """sha256 of the dataset's bytes (every file, for folder formats)."""
    info: dict[str, Any] = field(default_factory=dict)
    """What the reader knows about the dataset (recipe, build run id, ...)."""
    lines: dict[str, int] = field(default_factory=dict)
    """Item id to the line it was read from, where the format has lines."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """Rows dropped as identical repeats of an earlier id (`sources.duplicates`); the eval
    manifest's `dataset.duplicates` and the report say how many and which."""


Reader = Callable[[Path], Dataset]
FORMATS: Registry[Reader] = Registry("dataset format")
"""`--format` names; recipes announce the readers of published files by module, so that a
reader is imported only when its format is asked for."""
FORMATS.announce("parquet", "gramagents.sources.exported")
FORMATS.announce("hf", "gramagents.sources.exported")


def dataset_format(name: str) -> Callable[[Reader], Reader]:
    """Register a dataset reader under a `--format` name."""

    def register(reader: Reader) -> Reader:
        return FORMATS.register(name, reader)

    return register


def known_formats() -> list[str]:
    """Names of registered dataset formats."""
    return FORMATS.names()


def read_dataset(path: str | Path, fmt: str = "gramagents") -> Dataset:
    """Read a dataset with the reader registered as `fmt`."""
    reader = FORMATS.get(fmt)
    if reader is None:
        raise InputError(path, f"unknown --format '{fmt}' (known: {', '.join(known_formats())})")
    return reader(Path(path))


def _item_or_error(path: Path, line: int, raw: str) -> Item:
    """The item on `line`, or the one-line error that names what is wrong with it."""
    obj = _text.parse_json_line(path, line, raw)
    try:
        return Item.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        raise InputError(path, error["msg"], line=line, field=where) from None


@dataset_format("gramagents")
def read_items(path: Path) -> Dataset:
    """A `dataset.jsonl` written by `gramagents build`, or the build run folder holding it."""
    info: dict[str, Any] = {}
    if path.is_dir() and not (path / "dataset.jsonl").exists():
        from .exported import looks_exported, read_exported

        if looks_exported(path):
            return read_exported(path)
    if path.is_dir():
        from ..runtime.run import read_manifest

        manifest = read_manifest(path)
        if manifest is not None:
            info = {"build_run": manifest.run_id, "recipe": manifest.recipe}
        path = path / "dataset.jsonl"
        if not path.is_file():
            raise InputError(path, "no dataset.jsonl in this folder (is it a build run?)")
    text = _text.read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty: no items", line=1)
    items: list[Item] = []
    first_line: dict[str, int] = {}
    repeated = RepeatedIds()
    with collector_paused():
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                # Parsed with repeated strings shared (keys, task names, source paths, short
                # values): the items take half the memory `model_validate_json` gives them.
                item = Item.model_validate(from_json(raw, cache_strings=True))
            except ValueError:  # not JSON, or not an item: the error names line and field
                item = _item_or_error(path, line, raw)
            if not repeated.admit(item.id, item, path, line):
                continue  # the same item twice: asked once, listed in the manifest
            first_line[item.id] = line
            items.append(item)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Dataset(
        path=path,
        items=items,
        digest=digest,
        info=info,
        lines=first_line,
        duplicates=repeated.dropped,
    )
