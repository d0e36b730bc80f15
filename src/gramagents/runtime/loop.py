"""Run a coroutine to its end from plain code, whether or not an event loop is running.

A script has no running loop: the coroutine runs in `asyncio.run`. A notebook cell (Jupyter,
IPython) and an async web handler run inside one, where `asyncio.run` refuses to start a
second: there the coroutine runs on a worker thread with a loop of its own, and the caller's
thread waits for it. Nothing outlives the call: the thread and its loop end with it, and no
loop is patched (as `nest_asyncio` would patch the caller's, for the whole process).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """The result of the coroutine `make()` returns, run to its end (its exception raised).

    An interrupt of the waiting thread (Ctrl-C, a notebook's stop button), or the cancelling
    of the task that waits (`asyncio.run` turns Ctrl-C into that), cancels the coroutine,
    waits for it to wind down (so that it leaves its run folder as a stopped command does)
    and is raised again.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the plain way
        return asyncio.run(make())
    return _on_worker(make, asyncio.current_task())


class _Outcome:
    """What the worker thread hands back: its loop and task while running, then the result."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.done = threading.Event()
        """Set as the worker ends (waited on, not `Thread.join`: a join that an interrupt
        breaks into can take the thread for ended while it runs)."""
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None
        self.value: Any = None
        self.error: BaseException | None = None


def _on_worker(make: Callable[[], Coroutine[Any, Any, T]], caller: asyncio.Task[Any] | None) -> T:
    outcome = _Outcome()

    def work() -> None:
        with asyncio.Runner() as runner:
            loop = runner.get_loop()

            async def main() -> Any:
                outcome.loop, outcome.task = loop, asyncio.current_task()
                outcome.ready.set()
                return await make()

            try:
                outcome.value = runner.run(main())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                outcome.error = exc
            finally:
                outcome.ready.set()
        outcome.done.set()

    worker = threading.Thread(target=work, name="gramagents-call", daemon=True)
    try:
        worker.start()  # an interrupt may come as soon as the job runs, before `start` returns
        while not outcome.done.wait(timeout=0.2):  # short waits: an interrupt reaches us
            if caller is not None and caller.cancelling():
                raise asyncio.CancelledError  # the caller's loop was asked to stop
    except BaseException:
        _cancel(outcome)
        raise
    worker.join()
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[no-any-return]


def _cancel(outcome: _Outcome) -> None:
    """Cancel the worker's coroutine and wait until it has wound down."""
    outcome.ready.wait()
    loop, task = outcome.loop, outcome.task
    if loop is not None and task is not None and not loop.is_closed():
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop closed in between: nothing left to cancel
            pass
    outcome.done.wait()
