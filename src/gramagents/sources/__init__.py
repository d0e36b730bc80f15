"""Readers that turn users' files into records.

Shared here: text helpers that name the offending line (`_text`), the dataset reader and the
registry of `--format` readers (`datasets`), answer files (`answers`), and the registry of
build sources (`SOURCES`), which recipes fill with the readers their `source:` names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..plugins import Registry


@dataclass(frozen=True)
class ReadOptions:
    """How a build reads its source."""

    limit: int | None = None
    """Keep only the first N units of the source (grammar points, items, trees, ...)."""
    seed: int = 1234
    options: dict[str, Any] = field(default_factory=dict)
    """The recipe's `source.options`, for the reader to validate."""


@dataclass
class SourceData:
    """What a reader found: the records the build works on and what it knows besides."""

    records: list[BaseModel]
    """Each with a unique `id`; agents, filters and the builder work on these."""
    context: dict[str, Any] = field(default_factory=dict)
    """Read-only facts for nodes and the builder (e.g. `points`: grammar points by id)."""
    stats: dict[str, int] = field(default_factory=dict)
    """Counts of the reading, recorded in the manifest's `stages` under `stage`."""
    stage: str = "read"
    files: list[dict[str, Any]] = field(default_factory=list)
    """Per source file: `file`, `read`, `parsed`, `refused` and whatever else the reader counts
    (the build report's table; a `reasons` mapping, reason -> count, is shown apart)."""
    warnings: list[str] = field(default_factory=list)
    """Problems that did not stop the reading, each naming file, line and field."""
    info: dict[str, Any] = field(default_factory=dict)
    """What the manifest's `source` says besides the path (e.g. `points`)."""
    failures: list[dict[str, Any]] = field(default_factory=list)
    """Units that could not be read into records, each with a `reason`."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """Identical repeats of an id, dropped (`sources.duplicates.RepeatedIds.dropped`); the
    manifest's `source.duplicates` and the build report say how many and which."""
    location: Path | None = None
    """The file or folder actually read, when `--source` names something other than a path
    (e.g. `nltk:treebank`, a corpus an installed package keeps): the manifest hashes it."""


SourceReader = Callable[[Path, ReadOptions], SourceData]


@dataclass(frozen=True)
class Source:
    """A registered build-source reader, and what `build --limit` counts in its source."""

    read: SourceReader
    unit: str = "records"
    """The units `ReadOptions.limit` keeps the first N of (e.g. `trees`), for the help."""

    def __call__(self, path: Path, options: ReadOptions) -> SourceData:
        """Read `path` with the registered reader."""
        return self.read(path, options)


SOURCES: Registry[Source] = Registry("source reader")
"""A recipe's `source:` names one of these; recipes announce their readers by module."""


def source_reader(name: str, *, unit: str = "records") -> Callable[[SourceReader], SourceReader]:
    """Register the reader of a build source under the name recipes give as `source:`.

    `unit` names what `--limit N` keeps the first N of; `gramagents build --help` lists it
    for each recipe.
    """

    def register(reader: SourceReader) -> SourceReader:
        SOURCES.register(name, Source(reader, unit))
        return reader

    return register
