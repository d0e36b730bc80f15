"""Progress display for long work: rich bars on a terminal, nothing in library use."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ProgressSink(Protocol):
    """Where long-running work reports how far it is."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase of `total` steps."""

    def advance(self, steps: int = 1) -> None:
        """Count finished steps of the current phase."""

    def note(self, message: str) -> None:
        """Say something short about what is happening."""

    def stop(self) -> None:
        """End the display."""


class SilentProgress:
    """Reports nothing (library use and tests)."""

    def start(self, label: str, total: int) -> None:
        """Ignore."""

    def advance(self, steps: int = 1) -> None:
        """Ignore."""

    def note(self, message: str) -> None:
        """Ignore."""

    def stop(self) -> None:
        """Ignore."""


class RichProgress:
    """A rich progress bar per phase, on stderr."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._started = False

    def start(self, label: str, total: int) -> None:
        """Show a new bar."""
        if not self._started:
            self._progress.start()
            self._started = True
        self._task = self._progress.add_task(label, total=total)

    def advance(self, steps: int = 1) -> None:
        """Move the current bar."""
        if self._task is not None:
            self._progress.advance(self._task, steps)

    def note(self, message: str) -> None:
        """Print a line above the bars."""
        self._progress.console.print(message)

    def stop(self) -> None:
        """Stop refreshing."""
        if self._started:
            self._progress.stop()
            self._started = False


def stage_line(stage: str, counts: dict[str, int], seconds: float | None = None) -> str:
    """One line saying what a finished stage counted (and how long it took)."""
    listed = ", ".join(f"{name} {value}" for name, value in counts.items()) or "nothing"
    took = "" if seconds is None else f" ({seconds:.0f} s)"
    return f"{stage}: {listed}{took}"


class LineProgress:
    """Plain lines on a stream that is not a terminal (a log, a pipe, CI).

    A phase prints its start, then how far it is at every tenth of its steps; notes (such as
    a finished stage's counts) print as they come.
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._label = ""
        self._total = 0
        self._done = 0
        self._shown = 0

    def _print(self, text: str) -> None:
        self.console.print(text, soft_wrap=True, markup=False, highlight=False)

    def start(self, label: str, total: int) -> None:
        """Print the phase and its size."""
        self._label, self._total, self._done, self._shown = label, total, 0, 0
        if total:
            self._print(f"{label}: {total} to do")

    def advance(self, steps: int = 1) -> None:
        """Print the count when it crosses a tenth of the phase."""
        self._done += steps
        if not self._total:
            return
        tenth = self._done * 10 // self._total
        if tenth > self._shown:
            self._shown = tenth
            self._print(f"{self._label}: {self._done}/{self._total}")

    def note(self, message: str) -> None:
        """Print a line."""
        self._print(message)

    def stop(self) -> None:
        """Nothing to stop."""
