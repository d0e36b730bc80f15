"""Merge requests from concurrent callers into batches for a local model.

Agents call a model one request at a time, from many concurrent tasks; a local model is fast
only when it sees many requests at once. The batcher queues what callers submit and hands the
model up to `max_batch` queued requests at a time, oldest first, in a worker thread, so the
event loop keeps running (and keeps queueing) while the model computes. Before each batch the
worker thread's torch threads are fitted to the machine again (`threads.refit`; only when the
command line asked for it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from .threads import refit

Req = TypeVar("Req")
Res = TypeVar("Res")


class MicroBatcher(Generic[Req, Res]):
    """Queue requests; run them in batches through a blocking function."""

    def __init__(
        self,
        run_batch: Callable[[list[Req]], Sequence[Res]],
        max_batch: int,
        linger_s: float = 0.002,
    ) -> None:
        self._run_batch = run_batch
        self.max_batch = max(1, max_batch)
        self._linger_s = linger_s
        self._pending: deque[tuple[Req, asyncio.Future[Res]]] = deque()
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, requests: Sequence[Req]) -> list[Res]:
        """Queue `requests` and wait for their results, in order."""
        if not requests:
            return []
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Res]] = []
        for request in requests:
            future: asyncio.Future[Res] = loop.create_future()
            self._pending.append((request, future))
            futures.append(future)
        worker = self._worker
        if worker is None or worker.done() or worker.get_loop() is not loop:
            self._worker = loop.create_task(self._drain())
        return list(await asyncio.gather(*futures))

    def _fitted(self, requests: list[Req]) -> Sequence[Res]:
        refit()  # in the worker thread: torch's thread count is per thread
        return self._run_batch(requests)

    async def _drain(self) -> None:
        while self._pending:
            # Let other callers that are about to submit join this batch.
            await asyncio.sleep(self._linger_s)
            batch: list[tuple[Req, asyncio.Future[Res]]] = []
            while self._pending and len(batch) < self.max_batch:
                request, future = self._pending.popleft()
                if not future.done():
                    batch.append((request, future))
            if not batch:
                continue
            try:
                results = await asyncio.to_thread(self._fitted, [r for r, _ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)):
                    raise
                continue
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
