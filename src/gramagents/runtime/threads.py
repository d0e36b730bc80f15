"""How many threads torch computes with, from the CPUs this process may use and the load.

torch starts one OpenMP thread per core. When other work already keeps those cores busy,
its threads wait on each other at every operation, and a run slows far more than its share
of the machine explains (one 32-token generation 30 times slower on a busy 2-core machine).
Taking only the cores nothing else is using keeps several runs on one machine slowing in
proportion. Only the command line applies this (`apply_threads`); the library never changes
the process's threads by itself.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
SAMPLE_S = 0.25
"""How long the command watches the CPUs before it chooses (`busy_elsewhere`)."""
PROC_STAT = Path("/proc/stat")


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
    if requested is None and os.environ.get("OMP_NUM_THREADS", "").isdigit():
        return int(os.environ["OMP_NUM_THREADS"])
    if requested is None:
        requested = choose_threads(usable_cpus(), current_load())
    threads = max(1, requested)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    else:
        for name in ENV_VARS:
            os.environ[name] = str(threads)
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
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    before, own = _cpu_times(stat, cpus), time.process_time()
    if before is None:
        return None
    time.sleep(window)
    after, own = _cpu_times(stat, cpus), time.process_time() - own
    if after is None or after[0] <= before[0]:
        return None
    total, idle = after[0] - before[0], after[1] - before[1]
    cores = len(cpus) if cpus else os.cpu_count() or 1
    busy = cores * (total - idle) / total
    return max(0.0, busy - (own / window if window > 0 else 0.0))


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
