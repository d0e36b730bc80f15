"""Readers that turn users' files into records.

Shared here: text helpers that name the offending line (`_text`), the dataset reader and the
registry of `--format` readers (`datasets`), answer files (`answers`), and the registry of
build sources, which recipes fill with their readers (`--source` files or folders).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..plugins import Registry

SourceReader = Callable[[Path], Any]
SOURCES: Registry[SourceReader] = Registry("source reader")
"""A recipe's `source:` names one of these; recipes announce their readers by module."""


def source_reader(name: str) -> Callable[[SourceReader], SourceReader]:
    """Register the reader of a build source under the name recipes give as `source:`."""

    def register(reader: SourceReader) -> SourceReader:
        return SOURCES.register(name, reader)

    return register
