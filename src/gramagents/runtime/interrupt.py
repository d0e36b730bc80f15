"""Stopping a command in seconds: a request to stop that every model backend heeds.

The command line turns Ctrl-C (SIGINT) and SIGTERM into a request to stop (`STOP.request`,
cli_runtime.run_command). A local model stops between decoding steps and between batches
(hf.py: a stopping criterion on every `generate`, a check before every batch); an API request
still out is abandoned (`unless_stopped`). Every answer already complete is kept, and each
request the stop left unanswered comes back as *not asked* (`not_asked_generation`,
`not_asked_likelihood`): never cached, never recorded as a failure, asked when the run is
resumed. An eval (`armed`) then records what was answered and ends `partial` with the reason
"interrupted"; other commands are cancelled as before, their threads stopping at once.

The library alone never installs a signal handler: nothing requests a stop unless the command
line (or a program embedding the library) does.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from ..records import Generation, Loglikelihood

T = TypeVar("T")
NOT_ASKED = "not asked: the command was stopped first"
"""The error of a request a stop left unanswered."""


class Interrupted(Exception):
    """The command was asked to stop (Ctrl-C or SIGTERM) before it was done.

    An `Exception`, not a `KeyboardInterrupt`: raised inside a task, it must travel as any
    error does rather than stop the event loop.
    """


def not_asked_generation() -> Generation:
    """A chat request a stop left unanswered."""
    return Generation(error=NOT_ASKED, interrupted=True)


def not_asked_likelihood() -> Loglikelihood:
    """A scoring request a stop left unanswered."""
    return Loglikelihood(logprob=0.0, mean_logprob=0.0, n_tokens=0, greedy=False, interrupted=True)


class StopSignal:
    """Whether this process was asked to stop; read from any thread, heeded in any loop."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._watched: dict[asyncio.AbstractEventLoop, set[asyncio.Task[Any]]] = {}
        self._stopped: set[asyncio.Task[Any]] = set()
        self.armed = False
        """Whether the running command ends gracefully on a stop (an eval): requests out are
        then abandoned when it comes (`unless_stopped`)."""

    @property
    def requested(self) -> bool:
        """Whether a stop was requested."""
        return self._event.is_set()

    def request(self) -> None:
        """Ask everything running to stop (safe from a signal handler and any thread)."""
        self._event.set()
        for loop in list(self._watched):
            try:
                loop.call_soon_threadsafe(self._abandon, loop)
            except RuntimeError:  # that loop is closed
                pass

    def reset(self, armed: bool = False) -> None:
        """Forget an earlier request (a new command starts)."""
        self._event.clear()
        self._watched.clear()
        self._stopped.clear()
        self.armed = armed

    def check(self) -> None:
        """Raise `Interrupted` if a stop was requested."""
        if self._event.is_set():
            raise Interrupted()

    def _abandon(self, loop: asyncio.AbstractEventLoop) -> None:
        """Cancel the tasks of `loop` waiting in `unless_stopped` (in that loop)."""
        for task in list(self._watched.get(loop, ())):
            if not task.done():
                self._stopped.add(task)
                task.cancel()

    async def unless_stopped(self, call: Awaitable[T]) -> T:
        """`call`'s result; `Interrupted` as soon as a stop is requested (`call` cancelled).

        Only while `armed`: otherwise `call` is simply awaited. The task awaiting is watched,
        and cancelled by the stop; a cancellation from elsewhere goes on as it came.
        """
        if not self.armed:
            return await call
        if self.requested:
            if inspect.iscoroutine(call):
                call.close()
            raise Interrupted()
        task = asyncio.current_task()
        assert task is not None
        watched = self._watched.setdefault(task.get_loop(), set())
        watched.add(task)
        try:
            return await call
        except asyncio.CancelledError:
            if task not in self._stopped:
                raise
            self._stopped.discard(task)
            task.uncancel()
            raise Interrupted() from None
        finally:
            watched.discard(task)


STOP = StopSignal()
"""The process's stop signal."""
