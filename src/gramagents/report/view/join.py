"""An eval run's items with every model's answer, in dataset order, streamed.

`responses.jsonl`, `scores.jsonl` and `failures.jsonl` are in the order the chunks finished,
not the dataset's, and several models interleave. They are copied, line by line, into a
temporary SQLite file keyed by item; the dataset is then read line by line and each item is
joined with its records by one indexed look-up. Memory stays flat in the number of items
(the records live on disk) and each file is read once.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from ...errors import GramagentsError
from ...records import Item, RunManifest

RESPONSE, SCORE, FAILURE = 0, 1, 2
FILES = ((RESPONSE, "responses.jsonl"), (SCORE, "scores.jsonl"), (FAILURE, "failures.jsonl"))
BATCH = 2000


@dataclass
class JoinedItem:
    """One item of the run and what each model made of it."""

    id: str
    task: str
    item: Item | None
    """The dataset's item (None when the dataset cannot be read any more)."""
    records: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    """Model index to record kind (`RESPONSE`, `SCORE`, `FAILURE`) to the record."""


_KEYS = re.compile(r'^\{"model":("(?:[^"\\]|\\.)*"),"item_id":("(?:[^"\\]|\\.)*"),')
"""The start of a record line as the eval writes it (pydantic keeps the fields in order)."""


def _keys(line: str) -> tuple[str, str] | None:
    """(model, item id) of a record line; read from its start, or from the whole line."""
    match = _KEYS.match(line)
    if match is not None:
        model, item = match.groups()
        return (
            json.loads(model) if "\\" in model else model[1:-1],
            json.loads(item) if "\\" in item else item[1:-1],
        )
    try:
        record = from_json(line)
    except ValueError:
        return None
    return str(record.get("model", "?")), str(record.get("item_id"))


class RecordStore:
    """A run's records on disk, keyed by item: a temporary SQLite file."""

    def __init__(self, path: Path, models: list[str]) -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE rec (item TEXT, model INTEGER, kind INTEGER, body TEXT);"
            "CREATE TABLE seen (item TEXT PRIMARY KEY);"
        )
        self.models = list(models)
        self._seen: list[tuple[str]] = []
        self._index = {m: i for i, m in enumerate(self.models)}

    def model_index(self, label: str) -> int:
        """The index of a model (a label the manifest does not list is added)."""
        index = self._index.get(label)
        if index is None:
            index = self._index[label] = len(self.models)
            self.models.append(label)
        return index

    def load(self, folder: Path) -> None:
        """Copy the run's record files in (a later record of an item and model wins)."""
        for kind, name in FILES:
            path = folder / name
            if not path.exists():
                continue
            batch: list[tuple[str, int, int, str]] = []
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    keys = _keys(line)
                    if keys is None:  # a partial last line left by a kill
                        continue
                    batch.append((keys[1], self.model_index(keys[0]), kind, line))
                    if len(batch) >= BATCH:
                        self.db.executemany("INSERT INTO rec VALUES (?, ?, ?, ?)", batch)
                        batch.clear()
            self.db.executemany("INSERT INTO rec VALUES (?, ?, ?, ?)", batch)
        self.db.execute("CREATE INDEX rec_item ON rec (item)")

    def records(self, item_id: str) -> dict[int, dict[int, dict[str, Any]]]:
        """Model index to kind to record, for one item; marks the item as seen."""
        found: dict[int, dict[int, dict[str, Any]]] = {}
        rows = self.db.execute(
            "SELECT model, kind, body FROM rec WHERE item = ? ORDER BY rowid", (item_id,)
        )
        for model, kind, body in rows:
            try:
                found.setdefault(model, {})[kind] = from_json(body)
            except ValueError:  # a partial last line left by a kill: not a record yet
                continue
        self._seen.append((item_id,))
        if len(self._seen) >= BATCH:
            self._note_seen()
        return found

    def _note_seen(self) -> None:
        self.db.executemany("INSERT OR IGNORE INTO seen VALUES (?)", self._seen)
        self._seen.clear()

    def unseen(self) -> Iterator[tuple[str, str]]:
        """(item id, task) of items with records that the dataset did not give, in order."""
        self._note_seen()
        rows = self.db.execute(
            "SELECT item, body FROM rec WHERE item NOT IN (SELECT item FROM seen) "
            "GROUP BY item ORDER BY MIN(rowid)"
        )
        for item_id, body in rows.fetchall():
            yield item_id, str(from_json(body).get("task", "?"))

    def close(self) -> None:
        """Close the database (the caller removes its folder)."""
        self.db.close()


def dataset_items(manifest: RunManifest) -> tuple[Iterator[Item], str | None]:
    """The evaluated dataset's items in order, or nothing and the reason it cannot be read.

    Our own `dataset.jsonl` is read line by line; a published format is read whole by its
    reader (those files are what their benchmark publishes).
    """
    info = manifest.dataset or {}
    path = Path(str(info.get("path", "")))
    fmt = str(info.get("format", "gramagents"))
    if fmt == "gramagents":
        file = path / "dataset.jsonl" if path.is_dir() else path
        if not file.is_file():
            return iter(()), f"{file}: not found"
        return stream_items(file, repeats=True), None
    try:
        from ...sources.datasets import read_dataset

        return iter(read_dataset(path, fmt).items), None
    except GramagentsError as exc:
        return iter(()), str(exc)


def stream_items(path: Path, repeats: bool = False) -> Iterator[Item]:
    """The items of a `dataset.jsonl`, read line by line.

    A line that is not an item is skipped: the build or eval that used the file read it. A
    repeated id is skipped too, as the dataset reader drops an identical repeat (and refuses a
    different one), so each item is shown and counted once; `repeats`: leave that to the
    caller, which then need not hold every id.
    """
    seen: set[str] = set()
    with path.open(encoding="utf-8-sig") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    item = Item.model_validate(from_json(raw, cache_strings=True))
                except ValueError:
                    continue
                if repeats:
                    yield item
                elif item.id not in seen:
                    seen.add(item.id)
                    yield item


def joined_items(
    manifest: RunManifest, store: RecordStore, given: list[Item] | None = None
) -> tuple[Iterator[JoinedItem], str | None]:
    """Every item in the run's scope with its records, and why the dataset is unreadable.

    Items come in dataset order, then any item with records the dataset no longer has.

    An item is in scope when it has a record, or, in a run that took every item of its tasks
    (no `--limit` sample in the manifest), is among the first `manifest.tasks[task]` items of
    its task, so that items not answered yet are listed too. An id is shown once.

    `given`: the run's items as the eval that just ran them has them (all in scope), so that
    its dataset need not be read again.
    """
    items, problem = (iter(given), None) if given is not None else dataset_items(manifest)
    sampled = bool((manifest.dataset or {}).get("sample"))

    def generate() -> Iterator[JoinedItem]:
        quota = {} if sampled or given is not None else dict(manifest.tasks)
        shown: set[str] = set()  # the run's items only: a sample of a large file stays small
        for item in items:
            records = store.records(item.id)
            left = quota.get(item.task, 0)
            if (records or left > 0 or given is not None) and item.id not in shown:
                shown.add(item.id)
                quota[item.task] = left - 1
                yield JoinedItem(item.id, item.task, item, records)
        for item_id, task in store.unseen():
            yield JoinedItem(item_id, task, None, store.records(item_id))

    return generate(), problem
