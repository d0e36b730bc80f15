"""Generation computes the start a batch's prompts share once, and answers as if it did not."""

from __future__ import annotations

import asyncio

import pytest

from gramagents.models.hf_prefix import MIN_SHARED, shared_start


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
