"""Datasets to evaluate: our own `dataset.jsonl` (or a build run folder), and registered formats.

`gramagents eval DATASET --format NAME` picks a reader; readers for published benchmark
files register themselves here under their format name. A folder written by
`gramagents export` (Parquet or a Hugging Face `datasets` folder, sources/exported.py) is
read as it is, by its own format or by the default one.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable, Iterator
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
from .duplicates import StreamedRepeats

Row = tuple[int | None, Item]
"""An item and the line it was read from (None where the format has no lines)."""


@dataclass
class Dataset:
    """Items to evaluate and where they came from.

    A large file is read as a stream (`stream`): `rows()` reads it afresh each time, one item
    at a time, so that taking a sample of it needs memory for the sample only. What a stream
    learns on its way (`digest`, `duplicates`) is set when it has been read to its end.
    """

    path: Path
    items: list[Item]
    """The items, for formats read whole (empty while `stream` is set)."""
    digest: str
    """sha256 of the dataset's bytes (every file, for folder formats)."""
    info: dict[str, Any] = field(default_factory=dict)
    """What the reader knows about the dataset (recipe, build run id, ...)."""
    lines: dict[str, int] = field(default_factory=dict)
    """Item id to the line it was read from, where the format has lines (for a stream: the
    items a selection kept, `workflow/selection.py`)."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """Rows dropped as identical repeats of an earlier id (`sources.duplicates`); the eval
    manifest's `dataset.duplicates` and the report say how many and which."""
    stream: JsonlStream | None = None
    """The reader of a file read as a stream; None when `items` holds everything."""

    def rows(self) -> Iterator[Row]:
        """Every item with its line, in file order.

        A stream may give an identical repeat of an earlier row; once it has ended,
        `repeated_lines` names those rows (a reader of the whole file leaves them out).
        """
        if self.stream is not None:
            yield from self.stream.rows(self)
            return
        for item in self.items:
            yield self.lines.get(item.id), item

    def repeated_lines(self) -> set[int]:
        """Lines of the rows a stream gave that repeat an earlier row (after the stream)."""
        return self.stream.repeated if self.stream is not None else set()

    def load(self) -> Dataset:
        """This dataset with every item in `items` (a stream is read once, to its end)."""
        if self.stream is not None:
            rows = list(self.rows())
            dropped = self.repeated_lines()
            kept = [(line, item) for line, item in rows if line not in dropped]
            self.items = [item for _, item in kept]
            self.lines = {item.id: line for line, item in kept if line is not None}
            self.stream = None
        return self


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


def open_dataset(path: str | Path, fmt: str = "gramagents") -> Dataset:
    """A dataset through the reader registered as `fmt`; a large JSONL file as a stream."""
    reader = FORMATS.get(fmt)
    if reader is None:
        raise InputError(path, f"unknown --format '{fmt}' (known: {', '.join(known_formats())})")
    return reader(Path(path))


def read_dataset(path: str | Path, fmt: str = "gramagents") -> Dataset:
    """Read a dataset whole with the reader registered as `fmt` (see `open_dataset`)."""
    return open_dataset(path, fmt).load()


def _no_dataset(folder: Path, manifest: Any) -> str:
    """Why a folder given to evaluate has no `dataset.jsonl`, and what to do instead."""
    if manifest is not None and manifest.kind == "build":
        from ..runtime.lock import FolderLock

        holder = FolderLock(folder).held_elsewhere()
        if holder is not None:
            return f"its build is still running ({holder}); evaluate it when the build ends"
        why = manifest.reason or "stopped before its dataset was written"
        return f"its build did not finish ({why}); run the build's command again to finish it"
    if manifest is not None:
        article = "an" if manifest.kind[0] in "aeiou" else "a"
        return f"holds {article} {manifest.kind} run, not a build run (evaluate a build's folder)"
    fits = _formats_that_read(folder)
    if fits:
        options = " or ".join(f"--format {name}" for name in fits)
        return f"no dataset.jsonl in this folder; its files read with {options}"
    return "no dataset.jsonl in this folder (is it a build run?)"


def _formats_that_read(folder: Path) -> list[str]:
    """The registered formats (besides ours) whose reader reads `folder` without an error."""
    fits = []
    for name in known_formats():
        if name in ("gramagents", "parquet", "hf"):  # ours, and exported folders (tried above)
            continue
        try:
            reader = FORMATS.get(name)
            dataset = reader(folder) if reader is not None else None
        except Exception:  # noqa: BLE001 - a reader that cannot read it says no
            continue
        if dataset is not None and (dataset.items or dataset.stream is not None):
            fits.append(name)
    return fits


def _item_or_error(path: Path, line: int, raw: bytes) -> Item:
    """The item on `line`, or the one-line error that names what is wrong with it."""
    obj = _text.parse_json_line(path, line, raw)
    try:
        return Item.model_validate(obj)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or None
        raise InputError(path, error["msg"], line=line, field=where) from None


def parse_item(path: Path, line: int, raw: bytes) -> Item:
    """The item of one JSONL line (bytes as in the file)."""
    try:
        # Parsed with repeated strings shared (keys, task names, source paths, short values):
        # the items take half the memory `model_validate_json` gives them.
        return Item.model_validate(from_json(raw, cache_strings=True))
    except ValueError:  # not JSON, not UTF-8, too deep, not an item: the error says which
        return _item_or_error(path, line, raw)


class JsonlStream:
    """Reads a `dataset.jsonl` one line at a time, with what it learns on the way.

    Every line is parsed and checked (a bad line is its one-line error, wherever it is);
    the bytes are hashed for the dataset's digest (the BOM left out) and the ids noted for
    repeats (`duplicates.StreamedRepeats`), so memory does not grow with the file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repeated: set[int] = set()
        """Lines of identical repeats, known once a pass has ended."""

    def rows(self, dataset: Dataset) -> Iterator[Row]:
        """Every line's item; at the end, the dataset's digest and duplicates are set."""
        digest = hashlib.sha256()
        repeats = StreamedRepeats()
        count = 0
        with collector_paused(), self.path.open("rb") as handle:
            offset = 0
            for line, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if line == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw, start = raw[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
                digest.update(raw)
                if not raw.strip():
                    continue
                item = parse_item(self.path, line, raw)
                repeats.note(item.id, line, start)
                count += 1
                yield line, item
        if not count:
            raise InputError(self.path, "file is empty: no items", line=1)
        dataset.duplicates, self.repeated = repeats.resolve(self.path, self._read_back)
        dataset.digest = digest.hexdigest()

    def _read_back(self, offset: int) -> tuple[str, Item]:
        with self.path.open("rb") as handle:
            handle.seek(offset)
            raw = handle.readline()
        item = parse_item(self.path, 0, raw)  # read once already: it parses
        return item.id, item


@dataset_format("gramagents")
def read_items(path: Path) -> Dataset:
    """A `dataset.jsonl` written by `gramagents build`, or the build run folder holding it.

    The file is read as a stream (`JsonlStream`): `Dataset.rows()` reads it, `load()` keeps it.
    """
    info: dict[str, Any] = {}
    if path.is_dir() and not (path / "dataset.jsonl").exists():
        from .exported import looks_exported, read_exported

        if looks_exported(path):
            return read_exported(path)
    if path.is_dir():
        from ..runtime.run import read_manifest
        from ..runtime.rundir import refuse_link

        manifest = read_manifest(path)
        if manifest is not None:
            info = {"build_run": manifest.run_id, "recipe": manifest.recipe}
            refuse_link(path / "dataset.jsonl")  # a run folder's file, its own
        if not (path / "dataset.jsonl").is_file():
            raise InputError(path, _no_dataset(path, manifest))
        path = path / "dataset.jsonl"
    if path.is_dir():
        raise InputError(path, "is a directory, expected a file")
    if not path.is_file():
        raise InputError(path, "file not found")
    return Dataset(path=path, items=[], digest="", info=info, stream=JsonlStream(path))
