"""Batches side by side on a CPU (`lanes`): a batcher runs several at once, each takes whole
batches of the model's, torch's fitted threads are shared among them, and an eval sends the
items whose answers may be longest first, so that the last batches are short ones."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import gramagents.recipes.cpg  # noqa: F401 - the tasks the items name
from gramagents.errors import SpecError
from gramagents.models.model import Model
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.batching import MicroBatcher
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.workflow.eval import EvalOptions, run_eval


class Watched:
    """A blocking batch function that records its batches and how many ran at once."""

    def __init__(self, hold_s: float = 0.05) -> None:
        self.hold_s = hold_s
        self.sizes: list[int] = []
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()

    def __call__(self, requests: list[int]) -> list[int]:
        with self.lock:
            self.sizes.append(len(requests))
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(self.hold_s)
        with self.lock:
            self.running -= 1
        return [r * 10 for r in requests]


@pytest.mark.parametrize("lanes", [1, 2])
def test_a_batcher_computes_as_many_batches_at_once_as_it_has_lanes(lanes):
    watched = Watched()
    batcher = MicroBatcher(watched, max_batch=64, lanes=lambda: lanes, granule=16)
    results = asyncio.run(batcher.submit(list(range(64))))
    assert results == [r * 10 for r in range(64)]
    assert watched.most == lanes
    # two lanes share what waits, in whole batches of 16; one lane takes what it may
    assert sorted(watched.sizes) == ([32, 32] if lanes == 2 else [64])


def test_a_lanes_share_is_rounded_up_to_whole_batches_of_the_models():
    watched = Watched()
    batcher = MicroBatcher(watched, max_batch=64, lanes=lambda: 2, granule=16)
    asyncio.run(batcher.submit(list(range(20))))
    assert sorted(watched.sizes) == [4, 16]  # not two batches of 10


def test_a_failing_batch_fails_its_own_callers_only():
    def run(requests: list[int]) -> list[int]:
        time.sleep(0.02)
        if 0 in requests:
            raise ValueError("broken batch")
        return requests

    batcher = MicroBatcher(run, max_batch=4, lanes=lambda: 2, granule=2)

    async def both() -> list[object]:
        return await asyncio.gather(
            batcher.submit([0, 1]), batcher.submit([2, 3]), return_exceptions=True
        )

    first, second = asyncio.run(both())
    assert isinstance(first, ValueError) and second == [2, 3]


def test_lanes_wanted_once_the_first_batch_loaded_the_model_start_beside_it():
    """The first batch loads the model alone, then says so (`lanes_changed`): the second lane
    starts while that batch still computes, and the batch takes its half of the threads."""
    from gramagents.runtime import threads

    wanted = [1]
    started: list[float] = []
    shares: list[int] = []

    def run(requests: list[int]) -> list[int]:
        started.append(time.perf_counter())
        if len(started) == 1:
            wanted[0] = 2  # the model is loaded
            batcher.lanes_changed()
            shares.append(threads._lane.share)
            time.sleep(0.4)
        else:
            time.sleep(0.02)
        return requests

    batcher = MicroBatcher(run, max_batch=4, lanes=lambda: wanted[0], granule=4)
    assert asyncio.run(batcher.submit(list(range(12)))) == list(range(12))
    assert started[1] - started[0] < 0.3  # not after the first batch's 0.4 s
    assert shares == [2]


def test_lanes_is_checked_in_the_spec():
    from gramagents.models import create_backend

    with pytest.raises(SpecError, match="lanes must be a positive integer, not 'two'"):
        create_backend("smollm2?lanes=two")
    assert create_backend("smollm2?lanes=3")._lane_count() == 1  # until the model is loaded


def _items(path):
    """SINGLE-T items (16 new tokens) before BATCH-T ones (64) in the file."""
    sentences = ["我会游泳。", "他会说法语。", "你会做饭吗？"]
    items = [
        Item(
            id=f"SINGLE-T/{k}",
            task="SINGLE-T",
            prompt=PromptParts(template="cpg/single.zh.md", vars={"sentence": s, "point": "会"}),
            answer="T",
            meta={"point": "1001"},
        )
        for k, s in enumerate(sentences)
    ]
    items += [
        Item(
            id=f"BATCH-T/{k}",
            task="BATCH-T",
            prompt=PromptParts(
                template="cpg/batch.zh.md",
                vars={"point": "会", "n": 3, "sentences": sentences[k:] + sentences[:k]},
            ),
            answer="TTT",
            meta={"point": "1001", "n": 3},
        )
        for k in range(2)
    ]
    write_jsonl_atomic(path, [i.model_dump(mode="json") for i in items])
    return path


def test_an_eval_asks_for_the_longest_answers_first(tmp_path, monkeypatch):
    asked: list[int] = []
    generate = Model.generate

    async def watched(self, requests, keys=None):
        asked.extend(r.params.max_tokens for r in requests)
        return await generate(self, requests, keys)

    monkeypatch.setattr(Model, "generate", watched)
    ScriptedBackend.register("always-t", lambda request: "T")
    dataset = _items(tmp_path / "dataset.jsonl")
    for cache in (False, True):  # without the cache the chunks render their own items
        asked.clear()
        options = EvalOptions(
            models=["scripted:always-t"], run_dir=tmp_path / f"e{cache}", use_cache=cache
        )
        asyncio.run(run_eval(dataset, options))
        assert asked == sorted(asked, reverse=True) and asked[0] > asked[-1], asked


@pytest.mark.slow
def test_two_lanes_answer_as_one_does(smollm2):
    """The same requests on the embedded model, one batch at a time and two side by side:
    the same replies, every one. Each request is its own batch (`batch_size=1`), so that the
    two ways differ only in running side by side, not in which requests share a batch."""
    from gramagents.models import create_backend
    from gramagents.records import ChatRequest, GenParams, Message

    requests = [
        ChatRequest(
            messages=[Message(role="user", content=f"Write a sentence about the number {n}.")],
            params=GenParams(max_tokens=8 + n % 5),
        )
        for n in range(12)
    ]

    async def ask(model: Model) -> list[str]:
        await model.generate(requests[:1])  # loads the model: lanes open once it is loaded
        done = await asyncio.gather(*(model.generate([r]) for r in requests))
        return [part[0].text for part in done]

    replies, most = {}, {}
    for lanes in (1, 2):
        backend = create_backend(f"smollm2?lanes={lanes}&batch_size=1")
        watched = Watched(hold_s=0)
        generate_batch = backend._generate_batch

        def counted(batch, params, generate_batch=generate_batch, watched=watched):
            with watched.lock:
                watched.running += 1
                watched.most = max(watched.most, watched.running)
            try:
                return generate_batch(batch, params)
            finally:
                with watched.lock:
                    watched.running -= 1

        backend._generate_batch = counted
        replies[lanes] = asyncio.run(ask(Model(backend)))
        most[lanes] = watched.most
    assert most == {1: 1, 2: 2}
    assert replies[1] == replies[2]
