"""Run folders: manifest, append-only JSONL records, atomic whole-file writes, resume.

Records are appended as soon as they exist, one `write` per batch of whole lines, and flushed;
a process killed mid-write can leave at most one partial last line, which the next run of the
same command cuts off before appending. Whole files (manifest, dataset, summary, report) are
written to a temporary file in the same folder and renamed over the old one.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from ..errors import RunError
from ..records import RunManifest

MANIFEST = "manifest.json"


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def new_run_id(kind: str) -> str:
    """`<kind>-<UTC timestamp>-<4 hex>`: sortable and unique."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{kind}-{stamp}-{secrets.token_hex(2)}"


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` so that readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl_atomic(path: Path, records: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write a whole JSONL file atomically; returns the number of lines."""
    lines = [_line(r) for r in records]
    write_atomic(path, "".join(lines))
    return len(lines)


def _line(record: BaseModel | dict[str, Any]) -> str:
    if isinstance(record, BaseModel):
        return record.model_dump_json() + "\n"
    return json.dumps(record, ensure_ascii=False) + "\n"


def repair_jsonl(path: Path) -> None:
    """Cut a partial last line left by a killed writer."""
    if not path.exists():
        return
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        chunk = 1 << 16
        position = size
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            data = handle.read(position - start)
            cut = data.rfind(b"\n")
            if cut >= 0:
                handle.truncate(start + cut + 1)
                return
            position = start
        handle.truncate(0)


def iter_jsonl(path: Path, skip_unreadable: bool = False) -> Iterator[dict[str, Any]]:
    """Objects of a JSONL file written by us (missing file: nothing).

    `skip_unreadable`: pass over a line that is not JSON (the partial last line of a run
    that was stopped, for a reader that only shows the file) instead of raising.
    """
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    if not skip_unreadable:
                        raise


class JsonlAppender:
    """Append-only JSONL writer: whole lines, flushed after each batch."""

    def __init__(self, path: Path) -> None:
        repair_jsonl(path)
        self.path = path
        self._handle: IO[str] = path.open("a", encoding="utf-8", newline="\n")

    def append(self, lines: list[str]) -> None:
        """Append serialised records (one JSON object each, no newline), flushed to the OS."""
        if lines:
            self._handle.write("\n".join(lines) + "\n")
            self._handle.flush()

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


class RunFolder:
    """One run's folder under `runs/` (or `--run-dir`)."""

    def __init__(self, path: Path, created: bool) -> None:
        self.path = path
        self.created = created
        """True when this invocation made the folder (it is removed if the run never starts)."""
        self._appenders: dict[str, JsonlAppender] = {}

    @classmethod
    def open(
        cls, run_dir: str | Path | None, kind: str, runs_root: Path | None = None
    ) -> RunFolder:
        """Open `run_dir` (resuming it) or create a new folder under `runs/`."""
        if run_dir is None:
            root = runs_root or Path.cwd() / "runs"
            path = root / new_run_id(kind)
        else:
            path = Path(run_dir)
        if path.exists() and not path.is_dir():
            raise RunError(f"--run-dir {path}: exists and is not a folder")
        created = not path.exists()
        if not created and any(path.iterdir()) and not (path / MANIFEST).is_file():
            raise RunError(f"--run-dir {path}: folder is not empty and holds no {MANIFEST}")
        path.mkdir(parents=True, exist_ok=True)
        return cls(path, created)

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    def read_manifest(self) -> RunManifest | None:
        """The manifest, if the folder has one."""
        file = self.path / MANIFEST
        if not file.is_file():
            return None
        try:
            return RunManifest.model_validate_json(file.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise RunError(f"{file}: unreadable manifest ({exc})") from None

    def write_manifest(self, manifest: RunManifest) -> None:
        """Write the manifest atomically."""
        write_atomic(self.path / MANIFEST, manifest.model_dump_json(indent=2) + "\n")

    def file(self, name: str) -> Path:
        """Path of a file in the folder."""
        return self.path / name

    def appender(self, name: str) -> JsonlAppender:
        """The (shared) appender of a JSONL file in the folder."""
        if name not in self._appenders:
            self._appenders[name] = JsonlAppender(self.path / name)
        return self._appenders[name]

    def close(self) -> None:
        """Close open appenders."""
        for appender in self._appenders.values():
            appender.close()
        self._appenders.clear()

    def discard(self) -> None:
        """Remove a folder this invocation created, when the run failed before it began."""
        self.close()
        if self.created:
            shutil.rmtree(self.path, ignore_errors=True)
