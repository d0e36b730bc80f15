"""Garbage-collector settings for bulk work.

Reading or rendering tens of thousands of records makes millions of small objects, none of
them in reference cycles; CPython's cyclic collector would walk them all again and again
while they are made (a 40,000-item dataset reads three times slower with it on). Reference
counting still frees everything; only cycles wait until the collector is back on.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_long_lived_depth = 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector while making many long-lived, acyclic objects.

    Inside a `long_lived` block, what was made stays out of the collector's walks afterwards
    too (else the first collection after the pause walks all of it, about a second for a
    40,000-item dataset).
    """
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
