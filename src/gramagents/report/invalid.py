"""Why answers were invalid, per model and task: the report's table and the viewer's."""

from __future__ import annotations

from collections.abc import Sequence

from ..scoring.extract import REASONS
from .summary import Summary


def reason_columns(summary: Summary) -> list[str]:
    """The reasons any answer of the run was invalid for, the extraction's first."""
    found = {r for tally in summary.tallies.values() for r, n in tally.reasons.items() if n}
    return [r for r in REASONS if r in found] + sorted(found - set(REASONS))


def reason_rows(
    summary: Summary, models: Sequence[str], tasks: Sequence[str]
) -> list[list[object]]:
    """Per (model, task) with invalid answers: model, task, answers, invalid, then per reason."""
    columns = reason_columns(summary)
    rows: list[list[object]] = []
    for model in models:
        for task in tasks:
            tally = summary.tallies.get((model, task))
            if tally is None or not tally.invalid:
                continue
            rows.append(
                [model, task, tally.n, tally.invalid, *(tally.reasons.get(r, 0) for r in columns)]
            )
    return rows


def reason_lines(summary: Summary, models: Sequence[str], tasks: Sequence[str]) -> list[str]:
    """The report's section: a table of the reasons, none when every answer was read."""
    from .markdown import markdown_table

    rows = reason_rows(summary, models, tasks)
    if not rows:
        return []
    header = ["model", "task", "answers", "invalid", *reason_columns(summary)]
    return [
        "",
        "## Invalid answers by reason",
        "",
        "Why answers could not be read: `echo` (the reply repeats the prompt), `refusal`, "
        "`hedge` (more than one answer offered, or unsure), `conflict` (two answers that "
        "disagree), `no-answer` (nothing readable); see the README's *Answer extraction*.",
        "",
        *markdown_table(header, [[str(c) for c in row] for row in rows]),
    ]
