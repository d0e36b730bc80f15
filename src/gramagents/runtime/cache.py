"""Content-addressed response cache in SQLite (WAL mode).

A key is the sha256 of the canonical JSON of everything that changes an answer: the backend's
identity (backend, model id and revision, base URL, dtype), the decoding parameters, the fully
rendered messages, the response schema and structured-output mode, the prompt and rubric hashes
and the sample index. Batch size and concurrency are not part of it. Only successful answers are
stored; errors never are.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_BATCH = 500


def canonical_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_key(value: Any) -> str:
    """sha256 hex digest of `value`'s canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


class ResponseCache:
    """A key-value store of JSON answers; one transaction per batch of reads or writes."""

    enabled = True

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers ("
            " key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
        )
        self._db.commit()

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Answers stored under any of `keys`."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        with self._lock:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, value FROM answers WHERE key IN ({marks})", chunk
                )
                for key, value in rows:
                    found[key] = json.loads(value)
        return found

    def has_many(self, keys: Iterable[str]) -> set[str]:
        """Those of `keys` that have an answer (values are not read)."""
        wanted = list(dict.fromkeys(keys))
        held: set[str] = set()
        with self._lock:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key FROM answers WHERE key IN ({marks})", chunk)
                held.update(key for (key,) in rows)
        return held

    def put_many(self, entries: Mapping[str, dict[str, Any]]) -> None:
        """Store answers, all in one transaction."""
        if not entries:
            return
        now = time.time()
        rows = [(key, json.dumps(value, ensure_ascii=False), now) for key, value in entries.items()]
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO answers (key, value, created) VALUES (?, ?, ?)", rows
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

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
