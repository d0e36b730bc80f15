"""Progress display for long work: rich bars on a terminal, plain lines elsewhere.

A phase (a build stage, one model's eval) has a size, counts its finished steps and, beside
them, named tallies (an agent stage's accepted and rejected calls, the judge's verdicts).
On a terminal, and in a notebook with ipywidgets (rich draws its bars there), each phase is a
rich bar; on a log, a pipe or CI (`LineProgress`) each update is one plain line on stderr, at
most one every `interval` seconds, plus a line when a phase starts and ends, and a heartbeat
line while a phase makes no visible progress, so a log shows the work is alive (`display`
chooses). Library calls that ask for none show nothing (`SilentProgress`).
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Callable
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

INTERVAL_S = 5.0
"""Seconds between two lines of a phase on a log."""
MIN_BEAT_S = 0.05
"""The shortest silence after which a phase that has not advanced prints its line again."""


class ProgressSink(Protocol):
    """Where long-running work reports how far it is."""

    def start(self, label: str, total: int) -> None:
        """Begin a phase of `total` steps (0: a step of unknown size, shown as running)."""

    def advance(self, steps: int = 1, **tallies: int) -> None:
        """Count finished steps of the current phase, and add to its named tallies."""

    def note(self, message: str) -> None:
        """Say something short about what is happening."""

    def stop(self) -> None:
        """End the display."""


class SilentProgress:
    """Reports nothing (library use and tests)."""

    def start(self, label: str, total: int) -> None:
        """Ignore."""

    def advance(self, steps: int = 1, **tallies: int) -> None:
        """Ignore."""

    def note(self, message: str) -> None:
        """Ignore."""

    def stop(self) -> None:
        """Ignore."""


def plain_console() -> Console:
    """A console on stderr that prints text as written.

    Labels and ids come from data: a model spec `openai:zzz` must not print as an emoji, nor
    `[red]` as a style.
    """
    return Console(stderr=True, markup=False, emoji=False, highlight=False)


def _tallies_text(tallies: dict[str, int]) -> str:
    return ", ".join(f"{name} {value}" for name, value in tallies.items())


class RichProgress:
    """A rich progress bar per phase, on stderr, its tallies beside it."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or plain_console()
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[tallies]}", markup=False),
            console=self.console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._tallies: dict[str, int] = {}
        self._started = False

    def start(self, label: str, total: int) -> None:
        """Show a new bar."""
        if not self._started:
            self._progress.start()
            self._started = True
        self._tallies = {}
        self._task = self._progress.add_task(label, total=total or None, tallies="")

    def advance(self, steps: int = 1, **tallies: int) -> None:
        """Move the current bar and its tallies."""
        if self._task is None:
            return
        for name, value in tallies.items():
            self._tallies[name] = self._tallies.get(name, 0) + value
        self._progress.update(
            self._task, advance=steps, tallies=_tallies_text(self._tallies), refresh=False
        )

    def note(self, message: str) -> None:
        """Print a line above the bars."""
        self._progress.console.print(message, markup=False, emoji=False, highlight=False)

    def stop(self) -> None:
        """Stop refreshing."""
        if self._started:
            self._progress.stop()
            self._started = False


class Steps:
    """A phase's steps counted as they arrive and settled as its chunks end.

    Work done in chunks (an eval's) counts each step when it happens (an answer back, a
    verdict in) and, when a chunk ends, settles the steps the chunk was to make, so that
    steps that never arrive one by one (an answer that failed, a repeated request) are
    counted then. The display shows the larger of the two sums, never past `total`, so it
    moves with the work, never backwards, and ends at `total`.
    """

    def __init__(self, advance: Callable[..., None], total: int) -> None:
        self.advance = advance
        """`advance(steps, **tallies)`: a sink's `advance`, or a function around it."""
        self.total = total
        self.arrived = 0
        self.settled = 0
        self.shown = 0

    def arrive(self, count: int, **tallies: int) -> None:
        """Count steps that happened (and add to the named tallies)."""
        self.arrived += count
        self._show(tallies)

    def settle(self, count: int) -> None:
        """A chunk ended: its `count` steps are done, arrived one by one or not."""
        self.settled += count
        self._show({})

    def _show(self, tallies: dict[str, int]) -> None:
        target = min(self.total, max(self.arrived, self.settled))
        step, self.shown = max(0, target - self.shown), max(self.shown, target)
        if step or tallies:
            self.advance(step, **tallies)


def stage_line(stage: str, counts: dict[str, int], seconds: float | None = None) -> str:
    """One line saying what a finished stage counted (and how long it took)."""
    listed = ", ".join(f"{name} {value}" for name, value in counts.items()) or "nothing"
    took = "" if seconds is None else f" ({seconds:.0f} s)"
    return f"{stage}: {listed}{took}"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"


class LineProgress:
    """Plain lines on a stream that is not a terminal (a log, a pipe, CI).

    Every line is whole and free of control characters: `label: done/total (pct %), rate/s,
    ETA ..., tallies, elapsed`. A phase prints at most every `interval` seconds as it
    advances, when it completes, and (from a background thread) every `interval` seconds
    while nothing advances, so a long batch still shows it is running. A phase that ends
    within `interval` of its start prints only its last line (a command that fails at once
    still says only its one error line).
    """

    def __init__(self, console: Console | None = None, interval: float = INTERVAL_S) -> None:
        self.console = console or plain_console()
        self.interval = interval
        self._lock = threading.Lock()
        self._label = ""
        self._total = 0
        self._done = 0
        self._tallies: dict[str, int] = {}
        self._began = 0.0
        self._printed = 0.0
        self._active = False
        self._wake = threading.Event()
        self._ticker: threading.Thread | None = None

    def _print(self, text: str) -> None:
        self.console.print(text, soft_wrap=True, markup=False, emoji=False, highlight=False)

    def _line(self) -> str:
        elapsed = time.monotonic() - self._began
        parts = [f"{self._done}/{self._total}" if self._total else f"{self._done} done"]
        if self._total:
            parts[0] += f" ({100 * self._done // self._total} %)"
        if self._done and elapsed > 0:
            rate = self._done / elapsed
            parts.append(f"{rate:.2f}/s" if rate < 10 else f"{rate:.0f}/s")
            if self._total and self._done < self._total:
                parts.append(f"ETA {_duration((self._total - self._done) / rate)}")
        if self._tallies:
            parts.append(_tallies_text(self._tallies))
        parts.append(f"elapsed {_duration(elapsed)}")
        return f"{self._label}: {', '.join(parts)}"

    def _emit(self) -> None:
        self._printed = time.monotonic()
        self._print(self._line())

    def start(self, label: str, total: int) -> None:
        """Begin the phase (its first line comes with its first update)."""
        with self._lock:
            self._label, self._total, self._done, self._tallies = label, total, 0, {}
            self._began = self._printed = time.monotonic()
            self._active = True
        self._ensure_ticker()

    def advance(self, steps: int = 1, **tallies: int) -> None:
        """Count; print when the phase completes or `interval` seconds have passed."""
        with self._lock:
            if not self._active:
                return
            self._done += steps
            for name, value in tallies.items():
                self._tallies[name] = self._tallies.get(name, 0) + value
            finished = bool(self._total) and self._done >= self._total
            if finished or time.monotonic() - self._printed >= self.interval:
                self._emit()
            if finished:
                self._active = False

    def note(self, message: str) -> None:
        """Print a line (a finished stage's counts)."""
        with self._lock:
            self._active = False  # a stage's summary ends its phase
            self._print(message)

    def stop(self) -> None:
        """End the heartbeat thread."""
        with self._lock:
            self._active = False
        self._wake.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2 * self.interval)
            self._ticker = None
        self._wake.clear()

    def _ensure_ticker(self) -> None:
        if self._ticker is not None and self._ticker.is_alive():
            return
        self._ticker = threading.Thread(target=self._tick, name="progress-lines", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        beat = max(self.interval, MIN_BEAT_S)
        while not self._wake.wait(beat / 2):
            with self._lock:
                if self._active and time.monotonic() - self._printed >= beat:
                    self._emit()


def display(console: Console | None = None) -> ProgressSink:
    """The progress display for `console` (default: stderr).

    Bars on a terminal, and in a notebook where rich can draw them (ipywidgets installed);
    elsewhere (a log, a pipe, CI, a notebook without ipywidgets) a plain line every few
    seconds, `GRAMAGENTS_PROGRESS_S` setting how many.
    """
    console = console or Console(stderr=True)
    if console.is_jupyter:
        if importlib.util.find_spec("ipywidgets") is not None:
            return RichProgress(console)
    elif console.is_terminal:
        return RichProgress(console)
    try:
        return LineProgress(console, interval=max(0.0, float(os.environ["GRAMAGENTS_PROGRESS_S"])))
    except (KeyError, ValueError):  # unset or not a number: the default interval
        return LineProgress(console)


class Labelled:
    """Another sink's display with every phase and line named (`LABEL: ...`).

    A profile names each entry's build and eval so (their stage lines would be alike).
    """

    def __init__(self, sink: ProgressSink, label: str) -> None:
        self.sink = sink
        self.label = label

    def start(self, label: str, total: int) -> None:
        """Begin a named phase."""
        self.sink.start(f"{self.label}: {label}", total)

    def advance(self, steps: int = 1, **tallies: int) -> None:
        """Count, as the sink does."""
        self.sink.advance(steps, **tallies)

    def note(self, message: str) -> None:
        """Say something, named."""
        self.sink.note(f"{self.label}: {message}")

    def stop(self) -> None:
        """End the display."""
        self.sink.stop()
