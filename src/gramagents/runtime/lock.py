"""The lock that makes one command at a time the owner of a run folder.

An OS file lock (`flock` through the `filelock` package) on `.lock` in the folder: the kernel
releases it when the holding process ends, however it ends (SIGKILL included), so a lock is
never left stale. The holder writes its pid and command line beside it (`.lock.pid`, its
credentials masked as in every file written), for the message a second command stops with.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from filelock import FileLock, Timeout

from ..errors import RunError
from ..redact import redact_command
from .rundir import now_iso, write_atomic

LOCK_FILE = ".lock"
PID_FILE = ".lock.pid"
LOCK_FILES = frozenset({LOCK_FILE, PID_FILE})
"""Files of the lock itself, which do not make a folder a run folder."""


class FolderLock:
    """The lock of one run folder, held by this process from `acquire` to `release`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = FileLock(folder / LOCK_FILE, timeout=0, thread_local=False)

    def acquire(self) -> None:
        """Take the lock at once, or raise a RunError naming the folder and its holder."""
        try:
            self._lock.acquire()
        except Timeout:
            raise RunError(
                f"{self.folder}: in use by another gramagents command ({self.holder()}); "
                "wait for it to end, or use another folder"
            ) from None
        argv = [os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv)]
        command = " ".join(redact_command(argv))
        write_atomic(self.folder / PID_FILE, f"{os.getpid()} {now_iso()} {command}\n")

    def held_elsewhere(self) -> str | None:
        """Its holder (as `holder` says) while another command holds the folder, else None.

        Takes the lock for an instant to find out; a folder never locked is not locked now.
        """
        if not (self.folder / LOCK_FILE).is_file():
            return None
        try:
            self._lock.acquire()
        except Timeout:
            return self.holder()
        self._lock.release(force=True)
        return None

    def holder(self) -> str:
        """`pid N since T: COMMAND`, as the holder wrote it (or as much as is known)."""
        try:
            text = (self.folder / PID_FILE).read_text(encoding="utf-8").strip()
        except OSError:
            return "pid unknown"
        pid, _, rest = text.partition(" ")
        since, _, command = rest.partition(" ")
        return (
            f"pid {pid}"
            + (f" since {since}" if since else "")
            + (f": {command}" if command else "")
        )

    def release(self) -> None:
        """Let the folder go (the pid file goes first, so it never names a past holder)."""
        if self._lock.is_locked:
            (self.folder / PID_FILE).unlink(missing_ok=True)
            self._lock.release(force=True)
