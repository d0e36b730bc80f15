"""Answers counted as they arrive, for the progress of whoever asked for them.

An eval counts each item once its answer is back (the cache's at once, a remote model's one
by one, a local model's batch by batch), not once a chunk of a hundred has been scored. The
caller sets a counter for the task that asks (`counting`, a context variable: it follows the
tasks that task starts and no others, so the judge's or an agent's requests are not counted
with the items'); the model layer reports to it (`arrived`), and a batching backend's
batcher reports each answer as its batch ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Counter = Callable[[int], None]

_COUNTER: ContextVar[Counter | None] = ContextVar("gramagents_answers", default=None)


@contextmanager
def counting(counter: Counter) -> Iterator[None]:
    """Count the answers to what is asked inside the block (and the tasks it starts)."""
    token = _COUNTER.set(counter)
    try:
        yield
    finally:
        _COUNTER.reset(token)


def counter() -> Counter | None:
    """The counter of the current task, if it has one."""
    return _COUNTER.get()


def arrived(count: int) -> None:
    """Report `count` answers to the current task's counter (none: nothing)."""
    found = _COUNTER.get()
    if found is not None and count:
        found(count)
