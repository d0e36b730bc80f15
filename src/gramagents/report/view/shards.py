"""The page's data files: an index and fixed-size shards the page loads as it needs them.

Each file is a script that hands its payload to the page (`gvData("KEY", {...});`), so the
site works when opened straight from disk (browsers refuse `fetch` of `file://` URLs, but not
`<script src>`). A browser's index holds a few small integers per row (for filtering all rows
at once); the rows' text is in `rows-N.js` shards (what a list page shows) and the whole
record in `detail-N.js` shards (what an opened row shows). Shards are written as rows arrive,
so memory holds one shard at a time, whatever the number of rows.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

from pydantic_core import to_json

SHARD_ROWS = 500
"""Rows per shard: a list page of 50 rows touches few files, an opened row loads one shard."""


def script(key: str, payload: Any) -> bytes:
    """The bytes of a data file: a call handing `payload` to the page under `key`."""
    data = to_json(payload, fallback=str)
    # U+2028/2029 end lines in JavaScript engines older than ES2019
    data = data.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return b"gvData(" + json.dumps(key).encode() + b"," + data + b");\n"


class Facet:
    """A column rows are filtered by: the distinct values and each row's value code."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[str] = []
        self._codes: dict[str, int] = {}
        self.rows = array("i")

    def add(self, value: Any) -> None:
        """Note the next row's value (None: the row has none, code -1)."""
        if value is None:
            self.rows.append(-1)
            return
        text = str(value)
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self.values)
            self.values.append(text)
        self.rows.append(code)

    def dump(self) -> dict[str, Any]:
        """The facet as the index holds it."""
        return {"name": self.name, "values": self.values, "rows": self.rows.tolist()}


class ShardWriter:
    """Writes one table's index and shards under `folder` (named `KEY/...` for the page)."""

    def __init__(
        self,
        folder: Path,
        key: str,
        facets: list[str],
        flags: list[str] | None = None,
        shard_rows: int = SHARD_ROWS,
        ids: bool = False,
    ) -> None:
        self.folder = folder
        self.key = key
        self.shard_rows = shard_rows
        self.ids: list[str] | None = [] if ids else None
        """With `ids`, each row's first cell (its id), in row order: `ids.js`, which the page
        loads only to open a row from its address (`#item=ID`)."""
        folder.mkdir(parents=True, exist_ok=True)
        self.facets = {name: Facet(name) for name in facets}
        self.flags: dict[str, bytearray] = {name: bytearray() for name in flags or []}
        """Per flag column: one ASCII character per row (e.g. each model's outcome)."""
        self.count = 0
        self.largest = 0
        self._rows: list[Any] = []
        self._details: list[Any] = []

    def add(
        self,
        row: Any,
        detail: Any,
        facets: dict[str, Any],
        flags: dict[str, str] | None = None,
    ) -> None:
        """Add one row: its list entry, its full record, its facet values and flag characters."""
        for name, facet in self.facets.items():
            facet.add(facets.get(name))
        for name, chars in self.flags.items():
            chars.append(ord((flags or {}).get(name) or "-"))
        if self.ids is not None:
            self.ids.append(str(row[0]))
        self._rows.append(row)
        self._details.append(detail)
        self.count += 1
        if len(self._rows) >= self.shard_rows:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        shard = (self.count - 1) // self.shard_rows
        self._write(f"rows-{shard}", self._rows)
        self._write(f"detail-{shard}", self._details)
        self._rows, self._details = [], []

    def _write(self, name: str, payload: Any) -> None:
        data = script(f"{self.key}/{name}", payload)
        (self.folder / f"{name}.js").write_bytes(data)
        self.largest = max(self.largest, len(data))

    def close(self, info: dict[str, Any]) -> dict[str, Any]:
        """Write the last shard and the index (`info` plus counts, facets and flags)."""
        self._flush()
        index = {
            **info,
            "n": self.count,
            "shard": self.shard_rows,
            "facets": [facet.dump() for facet in self.facets.values()],
            "flags": {name: chars.decode("ascii") for name, chars in self.flags.items()},
        }
        self._write("index", index)
        if self.ids is not None:
            self._write("ids", self.ids)
        return index
