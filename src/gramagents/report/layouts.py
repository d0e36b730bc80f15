"""Paper-specific table layouts: which tasks a paper's main table shows, under which headers."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .parts import PartsOfKind


@dataclass(frozen=True)
class Column:
    """One column of a paper's table."""

    group: str
    header: str
    """The column's name under its group; `{n}` stands for the number of sub-questions its
    items have (the items' `meta.n`), as the run has them: `T×{n}` is `T×9` for batches of
    nine sentences, `T×4/9` for batches of four and of nine."""
    task: str


class Sizes(Protocol):
    """What a column header needs of a summary: the sub-question counts per task."""

    sizes: dict[str, set[int]]


def column_header(column: Column, summary: Sizes) -> str:
    """A column's header (`group header`), `{n}` filled with the run's sub-question counts."""
    header = column.header
    if "{n}" in header:
        sizes = sorted(summary.sizes.get(column.task, ()))
        header = header.replace("{n}", "/".join(map(str, sizes)) or "n")
    return f"{column.group} {header}".strip()


@dataclass(frozen=True)
class Layout:
    """A paper's results table."""

    title: str
    columns: tuple[Column, ...]
    note: str = ""
    """What the numbers are, in a sentence shown above the table (e.g. the paper's unit)."""
    average_over: Literal["scored", "all"] = "scored"
    """The Average column: the mean over the columns the run scored, or, as a paper whose
    average is over every column (CPG-EVAL's Table 3, RANDOM row included), over all of them,
    left empty when a column has no score."""

    def applies_to(self, tasks: list[str]) -> bool:
        """True when the run has at least one of the table's tasks."""
        return any(c.task in tasks for c in self.columns)

    def average(self, values: Sequence[float | None]) -> float | None:
        """A row's Average of its column values (None where a column has no value)."""
        kept = [v for v in values if v is not None]
        if not kept or (self.average_over == "all" and len(kept) < len(values)):
            return None
        return sum(kept) / len(kept)

    def average_note(self, tasks: Collection[str], scored: Collection[str]) -> str:
        """How the Average was taken, naming the columns without scores where that matters.

        `tasks`: the run's tasks; `scored`: those some model has a score for.
        """
        if self.average_over == "scored":
            return (
                "Average is over the columns scored in this run; — marks a column the run "
                "does not have, or has no gold answers for."
            )
        note = (
            f"Average is the mean of all {len(self.columns)} columns, as the paper takes it "
            "(RANDOM's too)"
        )
        missing = [
            f"{c.task} ({'not in this run' if c.task not in tasks else 'no gold answers'})"
            for c in self.columns
            if c.task not in scored
        ]
        if missing:
            note += "; no Average, since this run did not score " + ", ".join(missing)
        return note + "."


LAYOUTS: PartsOfKind[Layout] = PartsOfKind("paper-table")
"""Recipes' paper tables (report parts of kind `paper-table`); the report shows every layout
the run has a task of."""


def paper_table(name: str, layout: Layout) -> Layout:
    """Register a paper's results table under a name."""
    return LAYOUTS.register(name, layout)
