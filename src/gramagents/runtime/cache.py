"""Content-addressed response cache in SQLite (WAL mode).

A key is the sha256 of the canonical JSON of everything that changes an answer: the backend's
identity (backend, model id and revision, base URL, dtype), the decoding parameters, the fully
rendered messages, the response schema and structured-output mode, the prompt and rubric hashes
and the sample index. Batch size and concurrency are not part of it. Only successful answers are
stored; errors never are.

Several runs may share one cache file at once (two evals on one machine, say): SQLite's WAL
mode lets readers go on while one writer writes, each write takes the write lock up front
(`BEGIN IMMEDIATE`, so a transaction never has to upgrade a read lock and fail at once), a
connection waits up to `busy_timeout` seconds for a lock, and an operation that still finds
the database locked is tried again a few times before the run stops with a `CacheError`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..errors import GramagentsError

_BATCH = 500
T = TypeVar("T")


class CacheError(GramagentsError):
    """The response cache cannot be used (another process holds it locked for too long)."""


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_key(value: Any) -> str:
    """sha256 hex digest of `value`'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class ResponseCache:
    """A key-value store of JSON answers; one transaction per batch of reads or writes."""

    enabled = True

    def __init__(self, path: Path, busy_timeout: float = 15.0, lock_attempts: int = 4) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.lock_attempts = lock_attempts
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = self._retrying(self._connect)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path, timeout=self.busy_timeout, check_same_thread=False, isolation_level=None
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS answers ("
                " key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
            )
        except BaseException:
            db.close()
            raise
        return db

    def _retrying(self, operation: Callable[[], T]) -> T:
        """Run `operation`, again while the database is locked by another process."""
        for attempt in range(1, self.lock_attempts + 1):
            try:
                return operation()
            except sqlite3.OperationalError as exc:
                text = str(exc)
                if "locked" not in text and "busy" not in text:
                    raise CacheError(
                        f"{self.path}: the response cache cannot be used ({text})"
                    ) from None
                if attempt == self.lock_attempts:
                    waited = self.busy_timeout * self.lock_attempts
                    raise CacheError(
                        f"{self.path}: the response cache stayed locked by another process for "
                        f"{waited:g} s; let the other run finish, or give this one its own "
                        "cache (GRAMAGENTS_CACHE) or --no-cache"
                    ) from None
                time.sleep(min(1.0, 0.05 * 2**attempt))
        raise AssertionError("unreachable")

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Answers stored under any of `keys`."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk)
            for key, value in rows:
                found[key] = json.loads(value)
        return found

    def has_many(self, keys: Iterable[str]) -> set[str]:
        """Those of `keys` that have an answer (values are not read)."""
        wanted = list(dict.fromkeys(keys))
        held: set[str] = set()
        for start in range(0, len(wanted), _BATCH):
            chunk = wanted[start : start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows = self._read(f"SELECT key FROM answers WHERE key IN ({marks})", chunk)
            held.update(key for (key,) in rows)
        return held

    def _read(self, query: str, args: list[str]) -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            with self._lock:
                return self._db.execute(query, args).fetchall()

        return self._retrying(run)

    def put_many(self, entries: Mapping[str, dict[str, Any]]) -> None:
        """Store answers, all in one transaction."""
        if not entries:
            return
        now = time.time()
        rows = [(key, json.dumps(value, ensure_ascii=False), now) for key, value in entries.items()]
        self._retrying(lambda: self._write(rows))

    def _write(self, rows: list[tuple[str, str, float]]) -> None:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany(
                    "INSERT OR REPLACE INTO answers (key, value, created) VALUES (?, ?, ?)", rows
                )
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def __len__(self) -> int:
        return int(self._read("SELECT COUNT(*) FROM answers", [])[0][0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


class NullCache:
    """The cache used with `--no-cache`: finds nothing and stores nothing."""

    enabled = False

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Nothing is ever found."""
        return {}

    def has_many(self, keys: Iterable[str]) -> set[str]:
        """Nothing is held."""
        return set()

    def put_many(self, entries: Mapping[str, dict[str, Any]]) -> None:
        """Nothing is stored."""

    def close(self) -> None:
        """Nothing to close."""


Cache = ResponseCache | NullCache


def open_cache(use_cache: bool = True, path: Path | None = None) -> Cache:
    """The response cache a command uses (every command opens it here).

    The file at `path` (default: `$GRAMAGENTS_CACHE`, runtime/paths.py), or, with `--no-cache`
    (`use_cache` False), one that holds nothing.
    """
    if not use_cache:
        return NullCache()
    from .paths import default_cache_path

    return ResponseCache(path or default_cache_path())
