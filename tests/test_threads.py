"""torch's threads follow the machine between batches, and only when the command line asks."""

from __future__ import annotations

import asyncio
import sys
import threading
import types

import pytest

from gramagents.runtime import threads
from gramagents.runtime.batching import MicroBatcher


class FakeTorch(types.ModuleType):
    """torch's thread count as torch keeps it: per thread, set by `set_num_threads`."""

    def __init__(self, start: int) -> None:
        super().__init__("torch")
        self.start = start
        self.local = threading.local()
        self.calls: list[tuple[str, int]] = []

    def get_num_threads(self) -> int:
        return getattr(self.local, "n", self.start)

    def set_num_threads(self, n: int) -> None:
        self.local.n = n
        self.calls.append((threading.current_thread().name, n))


@pytest.fixture
def machine(monkeypatch):
    """A 2-core machine whose `/proc/stat` samples the test scripts, and a fake torch."""
    samples: list[threads._Sample] = []
    monkeypatch.setattr(threads, "usable_cpus", lambda: 2)
    monkeypatch.setattr(threads, "_sample", lambda stat=None: samples.pop(0))
    monkeypatch.setattr(threads, "current_load", lambda: 1.0)  # another process on one core
    torch = FakeTorch(start=2)
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    yield samples, torch
    threads.stop_following()


def sample(busy_ticks: int, idle_ticks: int, own_s: float, at: float) -> threads._Sample:
    return threads._Sample((busy_ticks + idle_ticks, idle_ticks), own_s, at)


def threads_in_batch(batcher_threads: list[int], torch: FakeTorch) -> MicroBatcher:
    def run(requests: list[int]) -> list[int]:
        batcher_threads.append(torch.get_num_threads())
        return requests

    return MicroBatcher(run, max_batch=4)


def test_a_command_started_beside_another_takes_both_cores_once_the_other_ends(machine):
    samples, torch = machine
    # at start another process keeps one core busy: the command takes one thread
    samples.append(sample(busy_ticks=0, idle_ticks=0, own_s=0.0, at=0.0))
    assert threads.apply_threads(None) == 1
    seen: list[int] = []
    batcher = threads_in_batch(seen, torch)
    # 2 s later: 400 ticks on 2 cores, 200 of them busy, all of them this process's (2 s of
    # CPU): the other process has ended
    samples.append(sample(busy_ticks=200, idle_ticks=200, own_s=2.0, at=2.0))
    asyncio.run(batcher.submit([1, 2]))
    # 2 s more: both cores busy, this process one of them: another process has started
    samples.append(sample(busy_ticks=600, idle_ticks=200, own_s=4.0, at=4.0))
    asyncio.run(batcher.submit([3]))
    assert seen == [2, 1]
    assert all(name != threading.main_thread().name for name, _ in torch.calls[1:])


def test_fits_are_a_second_apart_at_least(machine):
    samples, torch = machine
    samples.append(sample(0, 0, 0.0, 0.0))
    threads.apply_threads(None)
    samples.append(sample(0, 100, 0.0, 0.3))  # idle, but only 0.3 s after: too short to tell
    assert threads.refit() == 1
    samples.append(sample(0, 400, 0.0, 2.0))
    assert threads.refit() == 2


@pytest.mark.parametrize("lanes", [1, 2])
def test_batches_side_by_side_share_the_fitted_threads(machine, lanes):
    samples, torch = machine
    samples.append(sample(0, 0, 0.0, 0.0))
    assert threads.apply_threads(None) == 1  # another process on one core at start
    # 2 s later the other process has ended (both cores free); 0.5 s more: no new fit
    samples += [sample(200, 200, 2.0, 2.0), sample(200, 300, 2.5, 2.5)]
    seen: list[int] = []
    barrier = threading.Barrier(lanes, timeout=5)

    def run(requests: list[int]) -> list[int]:
        seen.append(torch.get_num_threads())
        barrier.wait()  # both lanes compute at once (one lane: passes alone)
        return requests

    batcher = MicroBatcher(run, max_batch=1, lanes=lambda: lanes)
    asyncio.run(batcher.submit([1, 2]))
    assert seen == ([1, 1] if lanes == 2 else [2, 2])


@pytest.mark.parametrize("how", ["library", "--threads", "OMP_NUM_THREADS"])
def test_threads_set_by_hand_or_never_set_are_never_refitted(machine, monkeypatch, how):
    samples, torch = machine
    if how == "--threads":
        threads.apply_threads(1)
    elif how == "OMP_NUM_THREADS":
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        threads.apply_threads(None)
    before = list(torch.calls)
    samples.extend(sample(0, 400 * n, 0.0, 2.0 * n) for n in range(3))  # an idle machine
    seen: list[int] = []
    asyncio.run(threads_in_batch(seen, torch).submit([1]))
    assert threads.refit() is None
    assert torch.calls == before
    assert len(samples) == 3  # not even sampled


@pytest.mark.slow
def test_a_library_call_on_a_local_model_leaves_torchs_threads_as_it_found_them(smollm2):
    import concurrent.futures

    import torch

    from gramagents.models import Model
    from gramagents.records import ChatRequest, GenParams, Message

    threads.stop_following()
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        request = ChatRequest(
            messages=[Message(role="user", content="Name a colour.")],
            params=GenParams(max_tokens=4),
        )
        asyncio.run(Model(smollm2).generate([request, request]))
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            fresh = pool.submit(torch.get_num_threads).result()
        assert torch.get_num_threads() == 1 and fresh == 1
    finally:
        torch.set_num_threads(before)
