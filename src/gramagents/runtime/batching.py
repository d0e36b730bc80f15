"""Merge requests from concurrent callers into batches for a local model.

Agents call a model one request at a time, from many concurrent tasks; a local model is fast
only when it sees many requests at once. The batcher queues what callers submit and hands the
model up to `max_batch` queued requests at a time, oldest first, in a worker thread, so the
event loop keeps running (and keeps queueing) while the model computes. The model may hand
each answer back as it makes it (`deliver(index, result)` from inside `run_batch`, a local
model as each inner batch ends), and its caller has it at once, not when the whole batch
ends. Each answer is counted for its caller's progress as it is handed back
(runtime/answers.py). Before each batch the worker thread's torch threads are fitted to the
machine again (`threads.refit`; only when the command line asked for it).

A batcher may compute several batches at once (`lanes`), each in its own thread: on a CPU a
small model's batch keeps two cores only partly busy (per-step Python work, small matrix
products, waits between threads), while two batches side by side with one thread each keep
both busy. The fitted threads are then shared among the lanes (`threads.sharing`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

from . import answers
from .threads import refit, reshare, sharing

Req = TypeVar("Req")
Res = TypeVar("Res")
T = TypeVar("T")

_HAND_BACK: ContextVar[Callable[[int, Any], None] | None] = ContextVar(
    "gramagents_hand_back", default=None
)
"""Where `deliver` hands answers to, in the thread that runs a batch (none: nowhere)."""


def deliver(index: int, result: T) -> T:
    """Hand the answer to the batch's request `index` back at once; returns `result`.

    A no-op outside a batcher's batch (a direct call, a test).
    """
    hand_back = _HAND_BACK.get()
    if hand_back is not None:
        hand_back(index, result)
    return result


@contextmanager
def delivering(hand_back: Callable[[int, Any], None]) -> Iterator[None]:
    """Have `deliver` inside the block hand answers to `hand_back` (what a batcher does)."""
    token = _HAND_BACK.set(hand_back)
    try:
        yield
    finally:
        _HAND_BACK.reset(token)


class MicroBatcher(Generic[Req, Res]):
    """Queue requests; run them in batches through a blocking function."""

    def __init__(
        self,
        run_batch: Callable[[list[Req]], Sequence[Res]],
        max_batch: int,
        linger_s: float = 0.002,
        lanes: Callable[[], int] = lambda: 1,
        granule: int = 1,
    ) -> None:
        self._run_batch = run_batch
        self.max_batch = max(1, max_batch)
        self._linger_s = linger_s
        self._lanes = lanes
        """How many batches may compute at once, asked again before each batch."""
        self._granule = max(1, granule)
        """What a lane takes is rounded up to a multiple of this (the model's own batch)."""
        self._pending: deque[tuple[Req, asyncio.Future[Res]]] = deque()
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._busy = 0
        """Lanes computing a batch now (counted on the event loop's thread)."""
        self._loop: asyncio.AbstractEventLoop | None = None

    async def submit(self, requests: Sequence[Req]) -> list[Res]:
        """Queue `requests` and wait for their results, in order."""
        if not requests:
            return []
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Res]] = []
        count = answers.counter()
        for request in requests:
            future: asyncio.Future[Res] = loop.create_future()
            if count is not None:
                future.add_done_callback(lambda done: _count(done, count))
            self._pending.append((request, future))
            futures.append(future)
        self._start_lanes(loop)
        return list(await asyncio.gather(*futures))

    def lanes_changed(self) -> None:
        """The lanes wanted may have grown: start them now (from a batch's own thread).

        A local model computes its first batch alone, since it loads the model; once loaded,
        the other lanes need not wait for that batch to end. The calling batch takes its
        share of the threads from its next fit on.
        """
        reshare(self._lanes())
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._start_lanes, loop)
            except RuntimeError:  # the loop closed meanwhile: no lane is wanted any more
                pass

    def _start_lanes(self, loop: asyncio.AbstractEventLoop) -> None:
        """A worker for each lane wanted now that has none running."""
        self._loop = loop
        for lane in range(max(1, self._lanes())):
            worker = self._workers.get(lane)
            if worker is None or worker.done() or worker.get_loop() is not loop:
                self._workers[lane] = loop.create_task(self._drain(lane))

    def _fitted(self, requests: list[Req]) -> Sequence[Res]:
        with sharing(self._lanes()):
            refit()  # in the worker thread: torch's thread count is per thread
            return self._run_batch(requests)

    async def _drain(self, lane: int) -> None:
        """Run queued batches one after another; lane `lane` stops when no longer wanted."""
        while self._pending and (lane == 0 or lane < self._lanes()):
            # Let other callers that are about to submit join this batch.
            await asyncio.sleep(self._linger_s)
            # With several lanes, each takes its share of what waits (two half batches at
            # once rather than one full batch while the other lane idles), in whole batches of
            # the model's (no share cut into two small ones).
            idle = max(1, self._lanes() - self._busy)
            share = -(-len(self._pending) // idle)
            take = min(self.max_batch, -(-share // self._granule) * self._granule)
            batch: list[tuple[Req, asyncio.Future[Res]]] = []
            while self._pending and len(batch) < take:
                request, future = self._pending.popleft()
                if not future.done():
                    batch.append((request, future))
            if not batch:
                continue
            self._busy += 1
            try:
                with delivering(_hand_back(batch)):  # to_thread takes the context along
                    results = await asyncio.to_thread(self._fitted, [r for r, _ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)):
                    raise
                continue
            finally:
                self._busy -= 1
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
            if self._pending:  # more lanes may be wanted now (the first batch loads a model)
                self._start_lanes(asyncio.get_running_loop())


def _hand_back(batch: list[tuple[Any, asyncio.Future[Any]]]) -> Callable[[int, Any], None]:
    """Settles a batch's request `index` with its answer, from the thread that runs the batch."""
    loop = asyncio.get_running_loop()

    def hand_back(index: int, result: Any) -> None:
        loop.call_soon_threadsafe(_settle, batch[index][1], result)

    return hand_back


def _settle(future: asyncio.Future[Res], result: Res) -> None:
    if not future.done():
        future.set_result(result)


def _count(future: asyncio.Future[Any], count: answers.Counter) -> None:
    """Count a caller's answer once it is there (a failed or dropped one is not)."""
    if not future.cancelled() and future.exception() is None:
        count(1)
