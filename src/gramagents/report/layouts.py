"""Paper-specific table layouts: which tasks a paper's main table shows, under which headers."""

from __future__ import annotations

from dataclasses import dataclass

from ..plugins import Registry


@dataclass(frozen=True)
class Column:
    """One column of a paper's table."""

    group: str
    header: str
    task: str


@dataclass(frozen=True)
class Layout:
    """A paper's results table."""

    title: str
    columns: tuple[Column, ...]
    note: str = ""
    """What the numbers are, in a sentence shown above the table (e.g. the paper's unit)."""

    def applies_to(self, tasks: list[str]) -> bool:
        """True when the run has at least one of the table's tasks."""
        return any(c.task in tasks for c in self.columns)


LAYOUTS: Registry[Layout] = Registry("paper table layout")
"""Recipes register their paper's main table; the report shows every layout the run has a
task of."""


def paper_table(name: str, layout: Layout) -> Layout:
    """Register a paper's results table under a name."""
    return LAYOUTS.register(name, layout)
