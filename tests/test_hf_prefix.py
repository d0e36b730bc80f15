"""Generation computes the start a batch's prompts share once, and answers as if it did not;
on a CPU a batch's prompts are computed in runs cut where the fewest tokens are computed."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from gramagents.models.hf_prefix import (
    MIN_SHARED,
    PASS_TOKENS,
    prefill_groups,
    shared_start,
)


def test_the_shared_start_leaves_every_row_a_token_of_its_own():
    assert shared_start([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 9]]) == 2
    assert shared_start([[1, 2], [1, 2, 3]]) == 1
    assert shared_start([[7, 8], [1, 2]]) == 0


@pytest.mark.slow
def test_generation_with_the_shared_start_computed_once_answers_as_without(monkeypatch):
    from gramagents.models import Model, create_backend, hf_prefix
    from gramagents.records import ChatRequest, GenParams, Message

    shared = create_backend("smollm2?dtype=float32&batch_size=8")
    plain = create_backend("smollm2?dtype=float32&batch_size=8&prefix_sharing=false")
    questions = [
        "Does the sentence 'She can swim.' contain the grammar point [can for ability]?",
        "Does the sentence 'He must go.' contain the grammar point [must for obligation]?",
        "Does the sentence 'We may stay.' contain the grammar point [can for ability]?",
        "请判断：在句子“我会说一点儿中文。”中，是否包含语法点[能愿动词：会]?",
        "Name a colour.",
    ]
    requests = [
        ChatRequest(messages=[Message(role="user", content=q)], params=GenParams(max_tokens=12))
        for q in questions
    ]
    starts: list[int] = []
    real = hf_prefix.shared_start
    monkeypatch.setattr(hf_prefix, "shared_start", lambda b: starts.append(real(b)) or starts[-1])
    ours = asyncio.run(Model(shared).generate(requests))
    assert starts and max(starts) >= MIN_SHARED  # the system text at least, computed once
    theirs = asyncio.run(Model(plain).generate(requests))
    assert [g.text for g in ours] == [g.text for g in theirs]
    assert all(g.text.strip() for g in ours)


def test_a_model_whose_cache_cannot_be_repeated_gets_its_rows_plainly_padded():
    from types import SimpleNamespace

    from gramagents.models.hf_prefix import batch_inputs

    class NoRepeat:
        def __call__(self, **kwargs):
            return SimpleNamespace(past_key_values=object())  # no batch_repeat_interleave

    lm = SimpleNamespace(model=NoRepeat(), tokenizer=SimpleNamespace(pad_token_id=0), device="cpu")
    start = list(range(1, MIN_SHARED + 2))
    ids, mask, cached = batch_inputs(lm, [start + [50, 51], start + [60]], share=True)
    assert cached == {}
    assert ids[1].tolist() == [0, *start, 60]  # left-padded whole, not after the start
    assert mask[1].tolist() == [0] + [1] * (len(start) + 1)


def _cost(batch: list[list[int]], runs: list[list[int]]) -> int:
    """Tokens computed for `runs` as `prefill_groups` counts them, its passes included."""
    total = 0
    for run in runs:
        rows = [batch[i] for i in run]
        start = shared_start(rows) if len(rows) > 1 else 0
        start = start if start >= MIN_SHARED else 0
        total += start + len(rows) * (len(rows[0]) - start) + PASS_TOKENS * (1 + (start > 0))
    return total


def _longest_first(batch: list[list[int]]) -> list[list[int]]:
    return sorted(batch, key=lambda ids: -len(ids))


def test_prompts_sharing_a_long_start_are_computed_in_one_run():
    start = list(range(1, 41))
    batch = _longest_first([start + [100 + k] * (3 + k % 3) for k in range(8)])
    assert prefill_groups(batch, share=True) == [list(range(8))]


def test_a_long_prompt_is_not_padded_to_by_short_ones():
    batch = [list(range(1000, 1300))] + [[k, k + 1, k + 2, k + 3] for k in range(8)]
    runs = prefill_groups(batch, share=True)
    assert runs == [[0], list(range(1, 9))]  # one run: 9 x 300 tokens instead of 300 + 32


def test_the_runs_compute_the_fewest_tokens_of_every_cut():
    """Against every way of cutting small batches into consecutive runs."""
    rng = random.Random(7)
    for _ in range(60):
        starts = [[1] * rng.choice([0, 12, 20, 30]), [2] * rng.choice([0, 18, 25])]
        batch = _longest_first(
            [
                rng.choice(starts) + [rng.randrange(3, 50) for _ in range(rng.randrange(1, 40))]
                for _ in range(rng.randrange(1, 8))
            ]
        )
        for share in (True, False):
            runs = prefill_groups(batch, share)
            assert [i for run in runs for i in run] == list(range(len(batch)))
            cuts = [
                list(itertools.pairwise((0, *cut, len(batch))))
                for k in range(len(batch))
                for cut in itertools.combinations(range(1, len(batch)), k)
            ]
            best = min(
                _cost(batch, [list(range(a, b)) for a, b in bounds])
                if share
                else sum(len(batch[a]) * (b - a) + PASS_TOKENS for a, b in bounds)
                for bounds in cuts
            )
            found = (
                _cost(batch, runs)
                if share
                else sum(len(batch[run[0]]) * len(run) + PASS_TOKENS for run in runs)
            )
            assert found == best


@pytest.mark.slow
def test_prompts_computed_in_runs_then_decoded_together_answer_as_one_padded_batch(
    smollm2, monkeypatch
):
    """Runs of a batch (a long prompt alone, prompts sharing a start together) computed apart,
    their caches joined and decoded as one batch: the replies of the plainly padded batch."""
    from gramagents.models import hf_prefix
    from gramagents.records import GenParams

    tokenizer = smollm2.lm.tokenizer

    def prompt(text: str) -> list[int]:
        messages = [{"role": "user", "content": text}]
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return list(tokenizer(text, add_special_tokens=False).input_ids)

    batch = _longest_first(
        [prompt("Tell a long story about a dragon who lives in a cave by the sea. " * 6)]
        + [prompt(f"Does the sentence 'I can swim {k} km.' use a modal verb?") for k in range(5)]
        + [prompt("Name a colour."), prompt("Count to three.")]
    )
    params = GenParams(max_tokens=10)
    runs: list[list[list[int]]] = []
    real = hf_prefix.prefill_groups
    monkeypatch.setattr(
        hf_prefix, "prefill_groups", lambda b, s: runs.append(real(b, s)) or runs[-1]
    )
    joined = smollm2._generate_batch(batch, params)
    assert runs and len(runs[-1]) > 1  # computed in runs, not as one padded block
    monkeypatch.setattr(hf_prefix, "prefilled", lambda *args: None)  # one padded batch
    padded = smollm2._generate_batch(batch, params)
    assert [g.text for g in joined] == [g.text for g in padded]
    assert all(g.text.strip() for g in joined)


def test_a_model_whose_cache_cannot_be_joined_is_padded_plainly_and_not_tried_again():
    """A sliding-window cache keeps only its window: such a model's batches are padded as one
    block, and after the first try its prompts are not computed twice."""
    from types import SimpleNamespace

    import torch

    from gramagents.models.hf_prefix import generation_inputs

    class Sliding(torch.nn.Module):
        calls = 0

        def forward(self, input_ids, attention_mask=None, position_ids=None, **kwargs):
            Sliding.calls += 1
            rows, width = input_ids.shape
            layer = SimpleNamespace(
                keys=torch.zeros(rows, 1, width, 4), values=torch.zeros(rows, 1, width, 4)
            )
            layer.is_sliding = True
            return SimpleNamespace(past_key_values=SimpleNamespace(layers=[layer]))

    lm = SimpleNamespace(model=Sliding(), tokenizer=SimpleNamespace(pad_token_id=0), device="cpu")
    batch = [[5, 6, 7, 8], [9, 10]]
    for _ in range(2):
        ids, mask, cached = generation_inputs(lm, batch, share=True, in_runs=True)
        assert cached == {} and ids[1].tolist() == [0, 0, 9, 10]
        assert mask[1].tolist() == [0, 0, 1, 1]
    assert Sliding.calls == 1  # tried once, then known


def test_prompts_of_one_token_are_padded_plainly_without_marking_the_model():
    """A run whose prompts are one token each has nothing to compute before `generate`: the
    batch is padded as one block (no model pass), and later batches are still computed in
    runs."""
    from types import SimpleNamespace

    import torch

    from gramagents.models.hf_prefix import _PLAIN, generation_inputs

    class Unused(torch.nn.Module):
        def forward(self, **kwargs):
            raise AssertionError("nothing to compute for one-token prompts")

    lm = SimpleNamespace(model=Unused(), tokenizer=SimpleNamespace(pad_token_id=0), device="cpu")
    long = list(range(100, 120))  # a run of its own: the one-token prompts are another
    ids, mask, cached = generation_inputs(lm, [long, [5], [6]], share=True, in_runs=True)
    assert cached == {} and ids[1].tolist() == [0] * 19 + [5] and ids[0].tolist() == long
    assert mask[2].tolist() == [0] * 19 + [1]
    assert lm.model not in _PLAIN
