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

ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def choose_threads(cpus: int, load: float) -> int:
    """Threads for `cpus` usable CPUs when `load` runnable tasks are already in flight.

    The load is the one-minute load average before this process starts computing: the
    cores it leaves idle, at least one.
    """
    busy = int(load + 0.5)
    return max(1, min(cpus, cpus - busy))


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
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        requested = choose_threads(usable_cpus(), load)
    threads = max(1, requested)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    else:
        for name in ENV_VARS:
            os.environ[name] = str(threads)
    return threads
