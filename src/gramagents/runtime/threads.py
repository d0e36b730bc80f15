"""How many threads torch computes with, from the CPUs this process may use and the load.

torch starts one OpenMP thread per core. When other work already keeps those cores busy,
its threads wait on each other at every operation, and a run slows far more than its share
of the machine explains (one 32-token generation 30 times slower on a busy 2-core machine).
Taking only the cores nothing else is using keeps several runs on one machine slowing in
proportion. The machine changes while a command runs (a command started while another ends
sees the other's load, then an idle machine), so the choice is fitted again between batches:
a local backend calls `refit` before each batch, which measures what other processes used
since the last fit (no waiting: the time between batches is the sample) and sets the threads
of the thread about to compute. Only the command line turns this on (`apply_threads`); the
library never changes the process's threads by itself, and `refit` then does nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
SAMPLE_S = 0.25
"""How long the command watches the CPUs before it chooses (`busy_elsewhere`)."""
PROC_STAT = Path("/proc/stat")
REFIT_MIN_S = 1.0
"""The shortest time between two fits: a shorter sample of `/proc/stat` (100 ticks a second)
is too coarse to tell a busy core from an idle one."""


@dataclass
class _Sample:
    """The CPUs' clock ticks, this process's CPU time and the wall clock, at one moment."""

    ticks: tuple[int, int]
    own_s: float
    at: float


@dataclass
class _Following:
    """The command line's choice to fit threads again between batches (`refit`)."""

    cpus: int
    threads: int
    last: _Sample | None


_following: _Following | None = None
_refit_lock = threading.Lock()
_lane = threading.local()
"""Per thread: how many batches compute side by side with this thread's (`sharing`)."""


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def choose_threads(cpus: int, load: float) -> int:
    """Threads for `cpus` usable CPUs when other processes keep `load` cores busy.

    The cores they leave idle (`load` rounded), at least one.
    """
    return max(1, cpus - int(load + 0.5))


def apply_threads(requested: int | None = None) -> int:
    """Set torch's intra-op threads for this command; returns the number set.

    `requested` (a command's `--threads`) wins; then an `OMP_NUM_THREADS` the user set; else
    `choose_threads` over the usable CPUs and the load average. Before torch is imported the
    choice goes into the OpenMP/MKL environment variables torch reads when it starts;
    after, into `torch.set_num_threads`.
    """
    global _following
    _following = None
    if requested is None and os.environ.get("OMP_NUM_THREADS", "").isdigit():
        return int(os.environ["OMP_NUM_THREADS"])
    follow = requested is None
    if requested is None:
        requested = choose_threads(usable_cpus(), current_load())
    threads = max(1, requested)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    else:
        for name in ENV_VARS:
            os.environ[name] = str(threads)
    if follow:  # chosen from the machine, so chosen again as the machine changes
        _following = _Following(usable_cpus(), threads, _sample())
    return threads


def stop_following() -> None:
    """Keep the threads as they are from now on (`refit` does nothing)."""
    global _following
    _following = None


def fitted_threads() -> int | None:
    """The threads the command line fitted to the machine last; None when it fits none."""
    fitted = _following
    return None if fitted is None else fitted.threads


@contextmanager
def sharing(lanes: int) -> Iterator[None]:
    """In the block, `refit` gives this thread its share of the fitted threads: one of `lanes`.

    Two batches side by side on a 2-core machine take one thread each, rather than two
    threads each fighting over the same cores. The share follows the lanes wanted, not those
    busy at the moment: a lane that gave itself every thread while the other was between
    batches would keep them, and the cores would be oversubscribed.
    """
    before = getattr(_lane, "share", None)
    _lane.share = max(1, lanes)
    try:
        yield
    finally:
        if before is None:
            del _lane.share
        else:
            _lane.share = before


def reshare(lanes: int) -> None:
    """Inside `sharing`: this thread's share is now one of `lanes` (the lanes wanted changed).

    `refit` gives the new share from the next fit on; the block still restores the share it
    found when it ends. Outside a `sharing` block it does nothing.
    """
    if hasattr(_lane, "share"):
        _lane.share = max(1, lanes)


def refit() -> int | None:
    """Fit torch's threads again to the cores other processes left idle since the last fit.

    Called by local backends before each batch, in the thread that computes it (torch's
    thread count is per thread). Does nothing (returns None) unless the command line chose
    the threads from the machine (`apply_threads` without a count); otherwise returns the
    threads set: the fitted count shared among the lanes computing side by side (`sharing`).
    Fits at most every `REFIT_MIN_S` seconds; in between, the last choice.
    """
    following = _following
    if following is None:
        return None
    with _refit_lock:
        now = _sample()
        last = following.last
        if now is not None and last is not None and now.at - last.at >= REFIT_MIN_S:
            busy = _busy_between(last, now, following.cpus)
            if busy is not None:
                following.threads = choose_threads(following.cpus, busy)
            following.last = now
        elif last is None:
            following.last = now
        threads = max(1, following.threads // getattr(_lane, "share", 1))
    torch = sys.modules.get("torch")
    if not hasattr(torch, "set_num_threads"):  # not imported, or being imported elsewhere
        return threads
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def current_load() -> float:
    """Cores other processes keep busy now: sampled where the system says, else the load average.

    The one-minute load average lags: a command that has just ended keeps it near one for a
    minute, and a command started then would take one thread on an idle machine (a 2-core
    EduEval example eval: 190 s instead of 136 s).
    """
    sampled = busy_elsewhere()
    if sampled is not None:
        return sampled
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def busy_elsewhere(window: float = SAMPLE_S, stat: Path = PROC_STAT) -> float | None:
    """Cores of this process's CPUs that other processes used over `window` seconds.

    Read from the per-CPU times of `/proc/stat` (Linux) before and after a short sleep, less
    what this process used meanwhile; None where there is no such file.
    """
    before = _sample(stat)
    if before is None:
        return None
    time.sleep(window)
    after = _sample(stat)
    if after is None:
        return None
    return _busy_between(before, after, usable_cpus(), window)


def _sample(stat: Path = PROC_STAT) -> _Sample | None:
    """The ticks of this process's CPUs, its CPU time and the clock now; None without stat."""
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    ticks = _cpu_times(stat, cpus)
    if ticks is None:
        return None
    return _Sample(ticks, time.process_time(), time.monotonic())


def _busy_between(
    before: _Sample, after: _Sample, cores: int, window: float | None = None
) -> float | None:
    """Cores other processes kept busy between two samples (this process's use taken off).

    `window` is the seconds between them when known exactly (a sleep); else the clock's.
    """
    total = after.ticks[0] - before.ticks[0]
    if total <= 0:
        return None
    idle = after.ticks[1] - before.ticks[1]
    busy = cores * (total - idle) / total
    seconds = window if window is not None else after.at - before.at
    own = after.own_s - before.own_s
    return max(0.0, busy - (own / seconds if seconds > 0 else 0.0))


def _cpu_times(stat: Path, cpus: set[int] | None) -> tuple[int, int] | None:
    """(all, idle) clock ticks so far of the CPUs in `cpus` (every CPU when None)."""
    try:
        lines = stat.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    total = idle = 0
    for line in lines:
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or len(fields) < 5:
            continue
        if cpus is not None and int(name[3:]) not in cpus:
            continue
        ticks = [int(f) for f in fields[:8]]
        total += sum(ticks)
        idle += ticks[3] + ticks[4]  # idle and iowait
    return (total, idle) if total else None
