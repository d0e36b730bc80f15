"""Run folders' files: append-only JSONL records and atomic whole-file writes.

runtime/run.py owns the folder; these are its low-level helpers.

Records are appended as soon as they exist, one `write` per batch of whole lines, and flushed;
a process killed mid-write can leave at most one partial last line, which the next run of the
same command cuts off before appending. Whole files (manifest, dataset, summary, report) are
written to a temporary file in the same folder and renamed over the old one. Every file and
folder gets the mode `open` and `mkdir` give under the process's umask, temporary ones too.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from ..errors import RunError


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def new_run_id(kind: str) -> str:
    """`<kind>-<UTC timestamp>-<4 hex>`: sortable and unique."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{kind}-{stamp}-{secrets.token_hex(2)}"


def umask() -> int:
    """The process's file mode creation mask (read, not changed, where the system allows)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere the only way to read it is to set it, and set it back
    os.umask(mask)
    return mask


def temporary_file(path: Path) -> tuple[int, str]:
    """A temporary file beside `path`, to be renamed over it, with the mode `open` gives.

    `tempfile` makes it private (0600), and the rename would keep that.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.fchmod(fd, 0o666 & ~umask())
    return fd, tmp


def temporary_folder(parent: Path, prefix: str, suffix: str = "") -> Path:
    """A temporary folder in `parent`, to be renamed into place, with the mode `mkdir` gives.

    `tempfile` makes it private (0700), and the rename would keep that.
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent))
    folder.chmod(0o777 & ~umask())
    return folder


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` with `text` so that readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temporary_file(path)
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


def refuse_link(path: Path) -> None:
    """A run folder's files are its own: a link among them is refused, never followed.

    A symbolic link would lead a write (or a read) elsewhere; a hard link (a file with another
    name, in or out of the folder) would have an append or a cut change the other name's
    bytes too. A missing file is fine (it is about to be made).
    """
    try:
        found = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return
    _refuse(path, found)


def _refuse(path: Path, found: os.stat_result) -> None:
    if stat.S_ISLNK(found.st_mode):
        raise RunError(
            f"{path}: is a symbolic link (to {os.readlink(path)}); a run folder's files must be "
            "its own, not links elsewhere"
        )
    if stat.S_ISREG(found.st_mode) and found.st_nlink > 1:
        raise RunError(
            f"{path}: is a hard link (the file has {found.st_nlink} names); a run folder's "
            "files must be its own: copy the file rather than link it"
        )


def refuse_links_within(folder: Path) -> None:
    """Refuse a run folder holding a link (`refuse_link`) at any depth."""
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                path = Path(entry.path)
                _refuse(path, entry.stat(follow_symlinks=False))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)


def repair_jsonl(path: Path) -> bytes:
    """Cut a partial last line left by a killed writer; returns what was cut."""
    refuse_link(path)
    if not path.exists():
        return b""
    with path.open("rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        if size == 0:
            return b""
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return b""
        chunk = 1 << 16
        position = size
        while position > 0:
            start = max(0, position - chunk)
            handle.seek(start)
            data = handle.read(position - start)
            cut = data.rfind(b"\n")
            if cut >= 0:
                handle.seek(start + cut + 1)
                tail = handle.read()
                handle.truncate(start + cut + 1)
                return tail
            position = start
        handle.seek(0)
        tail = handle.read()
        handle.truncate(0)
        return tail


def iter_jsonl(path: Path, skip_unreadable: bool = False) -> Iterator[dict[str, Any]]:
    """Objects of a JSONL file written by us (missing file: nothing).

    A line that is not a JSON object is a RunError naming the file and line, or, with
    `skip_unreadable` (a reader that only shows the file), passed over.
    """
    for line, record in iter_jsonl_lines(path):
        if record is not None:
            yield record
        elif not skip_unreadable:
            raise RunError(f"{path}:{line}: not a JSON record (a damaged line)")


def iter_jsonl_lines(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, object) for each non-blank line of a JSONL file.

    The object is None where the line is not a JSON object.
    """
    for number, _, record in iter_jsonl_raw(path):
        yield number, record


def iter_jsonl_raw(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """(line number, the line's bytes, object or None) for each non-blank line of a JSONL file."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)  # bytes: UTF-8, strictly
            except ValueError:
                record = None
            yield number, line, record if isinstance(record, dict) else None


class JsonlAppender:
    """Append-only JSONL writer: whole lines, flushed after each batch."""

    def __init__(self, path: Path) -> None:
        repair_jsonl(path)
        self.path = path
        self.written = 0
        """Lines appended through this appender."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o666)  # less the umask, as `open` makes files
        try:  # a link made since the check: the open file itself is what counts
            _refuse(path, os.fstat(fd))
        except RunError:
            os.close(fd)
            raise
        self._handle: IO[str] = os.fdopen(fd, "a", encoding="utf-8", newline="\n")

    def append(self, lines: list[str]) -> None:
        """Append serialised records (one JSON object each, no newline), flushed to the OS."""
        if lines:
            self._handle.write("\n".join(lines) + "\n")
            self._handle.flush()
            self.written += len(lines)

    def close(self) -> None:
        """Close the file."""
        self._handle.close()
