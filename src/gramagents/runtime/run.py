"""The `Run`: one command's hold on one run folder, from opening it to finishing it.

Every command that opens a run folder (build, eval, review, export, report, view) goes through
a `Run`, so that the rules are the same for all of them:

- **one owner**: the folder is locked for the life of the command (runtime/lock.py); a second
  command stops at once with a line naming the folder and the process that holds it. A command
  that opens a folder its own process already holds (an eval writing its viewer) borrows it;
- **its own files**: a folder that is a symbolic link, or that holds a link at any depth (a
  symbolic link, or a file with another name: a hard link), is refused, so that no read or
  write follows a link out of the folder and no append or cut changes another name's bytes;
- **what it resumes**: `manifest.json` is read here and only here, typed by kind
  (`BuildManifest | EvalManifest`); inputs that changed since the records were made are refused
  with one line naming them, or, with `--resume-changed=reask`, listed in the manifest
  (`changes`) and the records made under them set aside to be made again;
- **set aside, never lost**: a record line the resume cannot use (corrupt, repeated, out of
  step, made under changed inputs) is moved to `set-aside.jsonl` with its file, line and reason;
- **one deletion rule**: on failure, a folder the command created and wrote nothing durable into
  is removed; one it wrote records into is left `partial`, with the reason; one it did not touch
  is left as it was;
- **one finish**: manifest, summary, report and viewer are rewritten the same way by every
  command that changes records (`finish`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import TypeAdapter

from ..errors import GramagentsError, MissingExtra, RunError
from ..extras import installed
from ..records import BuildManifest, EvalManifest, InputChange, RunManifest
from .interrupt import Interrupted
from .lock import LOCK_FILES, FolderLock
from .rundir import (
    JsonlAppender,
    iter_jsonl,
    new_run_id,
    now_iso,
    refuse_link,
    refuse_links_within,
    write_atomic,
    write_jsonl_atomic,
)

MANIFEST = "manifest.json"
SET_ASIDE = "set-aside.jsonl"
ResumeChanged = Literal["refuse", "reask"]
"""What a resume does when inputs changed since its records were made."""

log = logging.getLogger("gramagents.run")
_MANIFESTS: TypeAdapter[RunManifest] = TypeAdapter(RunManifest)
_HELD: dict[Path, Run] = {}
"""Folders this process holds, by resolved path."""
_WARNED_LINES = 10
"""Set-aside lines named one by one on stderr; the rest are counted."""


def read_manifest(folder: Path) -> RunManifest | None:
    """A run folder's manifest, typed by its kind (None: the folder has none)."""
    file = Path(folder) / MANIFEST
    refuse_link(file)
    if not file.is_file():
        return None
    try:
        return _MANIFESTS.validate_python(_own_fields(json.loads(file.read_bytes())))
    except (ValueError, RecursionError) as exc:
        raise RunError(f"{file}: unreadable manifest ({_first_error(exc)})") from None


def _own_fields(data: Any) -> Any:
    """A manifest without the other kind's fields where they are empty.

    Manifests written before they were typed by kind carry every field of both kinds, the
    other kind's empty; a non-empty one is still an error.
    """
    if not isinstance(data, dict):
        return data
    own = {"build": BuildManifest, "eval": EvalManifest}.get(data.get("kind"))
    if own is None:
        return data
    return {k: v for k, v in data.items() if k in own.model_fields or v not in (None, {}, [])}


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "-"
        return f"field '{where}': {first.get('msg')}"
    return str(exc)


class Run:
    """One command's hold on a run folder; see the module docstring."""

    def __init__(self, path: Path, created: bool, lock: FolderLock | None) -> None:
        self.path = path
        self.created = created
        """True when this command made the folder."""
        self.found: RunManifest | None = None
        """The manifest the folder held when the command opened it."""
        self._lock = lock  # None: borrowed from the command of this process that holds it
        self._appenders: dict[str, JsonlAppender] = {}
        self._wrote = False

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, run_dir: str | Path | None, kind: str, runs_root: Path | None = None) -> Run:
        """Open `run_dir` to resume it, or make it (or a new folder under `runs/`), locked."""
        if run_dir is None:
            path = (runs_root or Path.cwd() / "runs") / new_run_id(kind)
        else:
            path = Path(run_dir)
        _refuse_linked_folder(path)
        if path.exists() and not path.is_dir():
            raise RunError(f"--run-dir {path}: exists and is not a folder")
        try:
            path.mkdir(parents=True)
            created = True
        except FileExistsError:
            created = False
        run = cls._locked(path, created)
        try:
            run.found = read_manifest(path)
            if run.found is None and any(e.name not in LOCK_FILES for e in path.iterdir()):
                raise RunError(f"--run-dir {path}: folder is not empty and holds no {MANIFEST}")
            if run.found is not None and run.found.kind != kind:
                raise RunError(
                    f"--run-dir {path}: holds {_a(run.found.kind)} run, not {_a(kind)} run"
                )
        except BaseException as exc:
            run.close(exc)
            raise
        return run

    @classmethod
    def existing(cls, folder: str | Path, kind: str | None = None) -> Run:
        """An existing run folder with its manifest, locked (or borrowed, see above)."""
        path = Path(folder)
        _refuse_linked_folder(path)
        if not path.is_dir():
            raise RunError(f"{path}: not a run folder")
        holder = _HELD.get(path.resolve())
        run = cls(path, False, None) if holder is not None else cls._locked(path, False)
        try:
            run.found = read_manifest(path)
            if run.found is None:
                raise RunError(f"{path}: no {MANIFEST} (is it a run folder?)")
            if kind is not None and run.found.kind != kind:
                raise RunError(f"{path}: {_a(run.found.kind)} run, not {_a(kind)} run")
        except BaseException:
            run.close()
            raise
        return run

    @classmethod
    def _locked(cls, path: Path, created: bool) -> Run:
        run = cls(path, created, FolderLock(path))
        try:
            refuse_links_within(path)
            assert run._lock is not None
            run._lock.acquire()
        except BaseException as exc:
            run._lock = None
            run.close(exc)
            raise
        _HELD[path.resolve()] = run
        return run

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(exc)

    def close(self, failure: BaseException | None = None) -> None:
        """Let the folder go, unlocked.

        Removed when the command made it, failed, and wrote nothing durable into it.
        """
        for appender in self._appenders.values():
            appender.close()
        self._appenders.clear()
        if failure is not None and self.created and not self.durable and self._lock is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            _HELD.pop(self.path.resolve(), None)
            self._lock.release()
            self._lock = None

    # -- files -------------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        """The folder's name."""
        return self.path.name

    @property
    def durable(self) -> bool:
        """Whether the command wrote records (or other results) into the folder."""
        return self._wrote or any(a.written for a in self._appenders.values())

    def file(self, name: str) -> Path:
        """Path of a file in the folder."""
        return self.path / name

    def appender(self, name: str) -> JsonlAppender:
        """The (shared) appender of a JSONL record file in the folder."""
        if name not in self._appenders:
            self._appenders[name] = JsonlAppender(self.file(name))
        return self._appenders[name]

    def write_text(self, name: str, text: str) -> None:
        """Write a result file of the folder atomically."""
        refuse_link(self.file(name))
        write_atomic(self.file(name), text)
        self._wrote = True

    def write_jsonl(self, name: str, records: Iterable[Any]) -> int:
        """Write a whole JSONL result file atomically; returns its lines."""
        refuse_link(self.file(name))
        self._wrote = True
        return write_jsonl_atomic(self.file(name), records)

    def write_manifest(self, manifest: RunManifest) -> None:
        """Write the manifest atomically (not a durable result by itself)."""
        write_atomic(self.file(MANIFEST), manifest.model_dump_json(indent=2) + "\n")

    # -- resuming ----------------------------------------------------------------------------

    def check_changes(
        self,
        changes: Mapping[str, tuple[str, str]],
        affected: int | None,
        policy: ResumeChanged,
    ) -> list[InputChange]:
        """Refuse a resume whose inputs changed under `affected` answers (None: all of them).

        With `reask`, the changes are returned for the manifest instead (the caller sets those
        records aside).
        """
        if not changes:
            return []
        if policy != "reask" and affected != 0:
            listed = ", ".join(_describe_change(k, *v) for k, v in sorted(changes.items()))
            under = (
                "" if affected is None else f" ({affected} answers made under the earlier inputs)"
            )
            raise RunError(
                f"{self.path}: changed since its records were made: {listed}{under}; re-run "
                "with --resume-changed=reask to set those aside (and ask again what this run "
                "asks), or use a new --run-dir to start afresh"
            )
        at = now_iso()
        return [
            InputChange(input=key, before=before, after=after, at=at)
            for key, (before, after) in sorted(changes.items())
        ]

    def set_aside(self, entries: list[dict[str, Any]]) -> int:
        """Move record lines out of the way, into `set-aside.jsonl` (each once).

        Each entry has `file`, `line`, `reason` and `text`; returns how many were new.
        """
        if not entries:
            return 0
        file = self.file(SET_ASIDE)
        refuse_link(file)
        kept = list(iter_jsonl(file, skip_unreadable=True))
        seen = {(e.get("file"), e.get("text")) for e in kept}
        new = [e for e in entries if (e["file"], e["text"]) not in seen]
        for entry in new[:_WARNED_LINES]:
            log.warning(
                "%s:%s: %s; set aside in %s",
                self.file(entry["file"]),
                entry["line"],
                entry["reason"],
                SET_ASIDE,
            )
        if len(new) > _WARNED_LINES:
            log.warning("... and %d more lines set aside in %s", len(new) - _WARNED_LINES, file)
        at = now_iso()
        write_jsonl_atomic(file, [*kept, *({**e, "at": at} for e in new)])
        return len(new)

    # -- finishing ---------------------------------------------------------------------------

    def settle(
        self,
        manifest: RunManifest,
        failure: BaseException | None,
        *,
        summary: Any = None,
        view: bool = True,
        items: list[Any] | None = None,
    ) -> None:
        """End a command that changes records: finish the run, or record its failure.

        A failed run is left `partial` with the reason; a folder the command made and wrote
        nothing into is left for `close` to remove.
        """
        if failure is not None:
            if self.created and not self.durable:
                return
            manifest.status = "partial"
            manifest.reason = describe_failure(failure)
        self.finish(manifest, summary=summary, view=view and failure is None, items=items)

    def finish(
        self,
        manifest: RunManifest,
        *,
        summary: Any = None,
        view: bool = True,
        items: list[Any] | None = None,
    ) -> None:
        """Rewrite the run's summary and report, its manifest, then its viewer.

        `items`: what an eval asked; in a folder this command made they are all its records
        hold, so the viewer need not read the dataset again.
        """
        from ..report.runs import write_reports  # the report builds on the runtime, not back

        manifest.finished = now_iso()
        if manifest.status == "complete":
            manifest.reason = None
        summary, sections = write_reports(self, manifest, summary)
        self.write_manifest(manifest)
        if view and not installed("viewer"):
            log.info("report.html not written: %s", MissingExtra("the run viewer", "viewer"))
        elif view:
            from ..report.view import refresh_view

            given = items if self.created else None
            refresh_view(self.path, summary=summary, sections=sections, items=given)


def describe_failure(failure: BaseException) -> str:
    """Why a command stopped, in one line for the manifest."""
    if isinstance(failure, KeyboardInterrupt | asyncio.CancelledError | Interrupted):
        return "interrupted; re-run the same command to resume"
    if isinstance(failure, GramagentsError):
        return str(failure)
    return f"{type(failure).__name__}: {failure}"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _describe_change(key: str, before: str, after: str) -> str:
    if key.startswith("endpoint/"):
        return f"the endpoint of {key.removeprefix('endpoint/')} ({before} -> {after})"
    if len(before) == len(after) == 64:  # a sha256
        return f"{key} (sha256 {before[:12]} -> {after[:12]})"
    return f"{key} ({before} -> {after})"


def _refuse_linked_folder(path: Path) -> None:
    if path.is_symlink():
        raise RunError(
            f"{path}: is a symbolic link (to {path.readlink()}); name the run folder itself"
        )
