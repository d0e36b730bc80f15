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
import threading
from collections.abc import Awaitable
from typing import TypeVar

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
    """Whether this process was asked to stop; read from any thread, waited for in any loop."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._futures: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = {}
        self.armed = False
        """Whether the running command ends gracefully on a stop (an eval): requests out are
        then raced against it (`unless_stopped`)."""

    @property
    def requested(self) -> bool:
        """Whether a stop was requested."""
        return self._event.is_set()

    def request(self) -> None:
        """Ask everything running to stop (safe from a signal handler and any thread)."""
        self._event.set()
        with self._lock:
            waiting = list(self._futures.values())
        for loop, future in waiting:
            try:
                loop.call_soon_threadsafe(_resolve, future)
            except RuntimeError:  # that loop is closed
                pass

    def reset(self, armed: bool = False) -> None:
        """Forget an earlier request (a new command starts)."""
        self._event.clear()
        with self._lock:
            self._futures.clear()
        self.armed = armed

    def check(self) -> None:
        """Raise `Interrupted` if a stop was requested."""
        if self._event.is_set():
            raise Interrupted()

    def _future(self) -> asyncio.Future[None]:
        """A future of the running loop, done once a stop is requested."""
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._futures.get(id(loop))
            if entry is None or entry[0] is not loop:
                entry = (loop, loop.create_future())
                self._futures[id(loop)] = entry
        if self.requested:
            _resolve(entry[1])
        return entry[1]

    async def unless_stopped(self, call: Awaitable[T]) -> T:
        """`call`'s result; `Interrupted` as soon as a stop is requested (`call` cancelled).

        Only while `armed`: otherwise `call` is simply awaited.
        """
        if not self.armed:
            return await call
        task = asyncio.ensure_future(call)
        stopped = self._future()
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.wait({task})
        raise Interrupted()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


STOP = StopSignal()
"""The process's stop signal."""
