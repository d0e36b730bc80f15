"""Garbage-collector settings for bulk work.

Reading or rendering tens of thousands of records makes millions of small objects, none of
them in reference cycles; CPython's cyclic collector would walk them all again and again
while they are made (a 40,000-item dataset reads three times slower with it on). Reference
counting still frees everything; only cycles wait until the collector is back on.

The collector is the whole process's, so nothing here touches it unless the caller asked,
with `tuned_collector()` (the `gramagents` command does, for every command). Elsewhere the
functions below change nothing: a program that calls `run_eval` keeps its collector as it
set it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_long_lived_depth = 0
_tuned = False


@contextmanager
def tuned_collector() -> Iterator[None]:
    """Let the bulk work inside the block pause, freeze and run the cyclic collector itself.

    Within the block the collector may be off while records are made, and the objects that
    live as long as a run are left out of its walks; when the block ends every function here
    is inert again (each one restores what it changed as its own block ends).
    """
    global _tuned
    before = _tuned
    _tuned = True
    try:
        yield
    finally:
        _tuned = before


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector while making many long-lived, acyclic objects.

    Inside a `long_lived` block, what was made stays out of the collector's walks afterwards
    too (else the first collection after the pause walks all of it, about a second for a
    40,000-item dataset).
    """
    if not _tuned:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _long_lived_depth:
            gc.freeze()
        if enabled:
            gc.enable()


@contextmanager
def long_lived() -> Iterator[None]:
    """Leave every object alive now out of the collector's walks until the block ends.

    Blocks nest; the outermost one's end hands everything back to the collector.
    """
    global _long_lived_depth
    if not _tuned:
        yield
        return
    gc.freeze()
    _long_lived_depth += 1
    try:
        yield
    finally:
        _long_lived_depth -= 1
        if not _long_lived_depth:
            gc.unfreeze()


def keep_out_of_collection() -> None:
    """Inside `long_lived`: leave the objects made since it began out of the walks too."""
    if _tuned and _long_lived_depth:
        gc.freeze()


@contextmanager
def collected_every(items: int) -> Iterator[Callable[[int], None]]:
    """Pause the automatic collector; the given `done(n)` collects by hand every `items` items.

    Call `done(n)` as `n` more items are finished. A full collection then reclaims whatever
    cycles the work made meanwhile, so memory is bounded however long the run. Inside a
    `long_lived` block what survives a collection (the run's records of what it answered,
    its running summary) is left out of the next ones, which then walk only what was made
    since: each collection costs the same however far the run has come.
    """
    if not _tuned:
        yield lambda count: None  # the automatic collector runs as the caller set it
        return
    pending = 0

    def done(count: int) -> None:
        nonlocal pending
        pending += count
        if pending >= items:
            pending = 0
            gc.collect()
            if _long_lived_depth:
                gc.freeze()

    with collector_paused():
        yield done
