"""Repeated ids in users' files, handled alike by every reader.

A record whose id was seen before is either an identical repeat (the same content: published
files have some, e.g. the CPG-EVAL lite file) or a conflict (two different records under one
id). An identical repeat is dropped and listed, so that the manifest and the report can say
how many and which; a conflict is an `InputError` naming the file, the line and the field,
and where the id was first seen.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..report.mdtext import code_span


class RepeatedIds:
    """The ids a reader has seen, and the identical repeats it dropped."""

    def __init__(self, what: str = "id") -> None:
        self.what = what
        """What the key is, in messages ("id", "pair", "answer id")."""
        self._first: dict[str, tuple[Path, int, Any]] = {}
        self.dropped: list[dict[str, Any]] = []
        """One entry per dropped repeat: `id`, `file`, `line`, `first` (`file:line`)."""

    def admit(self, key: str, content: Any, path: Path, line: int, field: str = "id") -> bool:
        """True for a new key; False for an identical repeat (listed); an error for a conflict."""
        first = self._first.get(key)
        if first is None:
            self._first[key] = (path, line, content)
            return True
        first_path, first_line, first_content = first
        where = f"line {first_line}" if first_path == path else f"{first_path}:{first_line}"
        if first_content == content:
            self.dropped.append(
                {"id": key, "file": str(path), "line": line, "first": f"{first_path}:{first_line}"}
            )
            return False
        raise InputError(
            path,
            f"duplicate {self.what} '{key}' (first on {where}) with different content"
            + _difference(first_content, content),
            line=line,
            field=field,
        )


def _difference(first: Any, second: Any) -> str:
    if hasattr(first, "model_dump") and hasattr(second, "model_dump"):
        first, second = first.model_dump(), second.model_dump()
    if not isinstance(first, dict) or not isinstance(second, dict):
        return ""
    differing = [k for k in dict.fromkeys([*first, *second]) if first.get(k) != second.get(k)]
    return f" ('{differing[0]}' differs)" if differing else ""


def summary(dropped: list[dict[str, Any]]) -> dict[str, Any]:
    """What a manifest records of dropped repeats: how many, which ids, and where each was."""
    return {
        "count": len(dropped),
        "ids": list(dict.fromkeys(d["id"] for d in dropped)),
        "rows": [f"{d['file']}:{d['line']} repeats {d['first']}" for d in dropped],
    }


def describe(recorded: dict[str, Any] | None, shown: int = 20) -> list[str]:
    """Report lines for a manifest's `duplicates` entry (none when nothing was dropped)."""
    if not recorded or not recorded.get("count"):
        return []
    ids = recorded.get("ids", [])
    listed = ", ".join(code_span(i) for i in ids[:shown])
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return [
        f"{recorded['count']} repeated rows dropped (same id, same content; ids: {listed}{more}); "
        "`manifest.json` lists where each was."
    ]


_MASK = (1 << 64) - 1


class StreamedRepeats:
    """Repeated ids in a file read as a stream, found with a few bytes per record.

    While the stream runs, each record leaves a 64-bit hash of its id, its line and where it
    starts (`note`); memory stays at 20 bytes a record, however large the records. When the
    stream ends, `resolve` sorts the hashes, reads back only the records whose hashes meet,
    and settles them as `RepeatedIds` does: an identical repeat is listed (its line dropped),
    a conflict is the error naming the later line.
    """

    def __init__(self) -> None:
        self._ids = array("Q")
        self._lines = array("I")
        self._offsets = array("Q")

    def note(self, key: str, line: int, offset: int) -> None:
        """A record with id `key` on `line`, starting at byte `offset` of the file."""
        # The process's own string hash: hashes are only compared within this pass, and ids
        # whose hashes meet are read back and compared as they are.
        self._ids.append(hash(key) & _MASK)
        self._lines.append(line)
        self._offsets.append(offset)

    def resolve(
        self, path: Path, read_back: Callable[[int], tuple[str, Any]]
    ) -> tuple[list[dict[str, Any]], set[int]]:
        """The dropped repeats (as `RepeatedIds.dropped`) and their lines.

        `read_back(offset)` gives the id and the content of the record starting there.

        Raises:
            InputError: Two different records under one id (the later one's line).
        """
        if len(self._ids) < 2:
            return [], set()
        import numpy as np

        hashes = np.frombuffer(self._ids, dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        ranked = hashes[order]
        meets = np.flatnonzero(ranked[1:] == ranked[:-1])
        if not len(meets):
            return [], set()
        positions = np.unique(np.concatenate([order[meets], order[meets + 1]]))
        repeated = RepeatedIds()
        for position in sorted(positions.tolist(), key=lambda p: self._lines[p]):
            key, content = read_back(self._offsets[position])
            repeated.admit(key, content, path, self._lines[position])
        return repeated.dropped, {entry["line"] for entry in repeated.dropped}
