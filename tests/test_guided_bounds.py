"""Bounded structured answers on local models: how many tokens each value may take, and one
pass over each prompt for all of an answer's fields."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from gramagents.judging.rubric import REASON_CHARS, find_rubric, judgment_model
from gramagents.models import create_backend
from gramagents.models.guided import NUMBER_TOKENS, GuidedDecoder, plan_schema
from gramagents.records import ChatRequest, Generation, GenParams, Message


class Verdict(BaseModel):
    score: float = Field(ge=0, le=10)
    count: int = Field(ge=1)
    reason: str = Field(max_length=30)


def test_each_value_takes_at_most_the_tokens_its_schema_allows():
    asked: list[int] = []

    def generate(batch, params: GenParams):
        asked.append(params.max_tokens)
        text = {NUMBER_TOKENS: "97", 11: "x" * 80}.get(params.max_tokens, "-4")
        return [Generation(text=text, completion_tokens=params.max_tokens) for _ in batch]

    encode = lambda text: [ord(c) for c in text]  # noqa: E731 - a character "tokenizer"
    decoder = GuidedDecoder(encode, generate, lambda prefixes, choices: [])
    request = ChatRequest(messages=[Message(role="user", content="q")], params=GenParams())
    plans = plan_schema(Verdict.model_json_schema())
    [out] = decoder.run(
        [[1]], [request.model_copy(update={"params": GenParams(max_tokens=384)})], plans
    )
    # score and count: NUMBER_TOKENS each; reason: maxLength 30 -> 30 // 3 + 1 tokens
    assert asked == [NUMBER_TOKENS, NUMBER_TOKENS, 11]
    value = Verdict.model_validate(json.loads(out.text))  # held in bounds, cut to length
    assert (value.score, value.count, value.reason) == (10, 97, "x" * 30)


def test_the_judges_reason_is_bounded():
    schema = judgment_model(find_rubric("text-writing")).model_json_schema()
    [reason] = [plan for plan in plan_schema(schema) if plan.name == "reason"]
    assert reason.max_length == REASON_CHARS
    assert reason.token_limit(384) == REASON_CHARS // 3 + 1 < 384


@pytest.mark.slow
def test_cached_steps_write_what_a_pass_per_field_writes():
    # float32: in bfloat16, a prompt computed in pieces rounds differently from one computed
    # whole, and greedy decoding may then take another path
    smollm2 = create_backend("smollm2?dtype=float32")
    schema = judgment_model(find_rubric("text-writing")).model_json_schema()
    request = ChatRequest(
        messages=[
            Message(
                role="user",
                content="Grade this essay from 0 to 10 on each dimension, as JSON: "
                "'My summer was good. I swam and read books.'",
            )
        ],
        params=GenParams(temperature=0.0, max_tokens=24),
        response_schema=schema,
        structured_mode="guided",
    )
    assert smollm2.guided_steps == "cached"
    [cached] = smollm2._generate_sync([request])
    smollm2.guided_steps = "batched"
    try:
        [batched] = smollm2._generate_sync([request])
    finally:
        smollm2.guided_steps = "cached"
    assert cached.text == batched.text
    answer = json.loads(cached.text)
    assert list(answer)[-2:] == ["total", "reason"] and len(answer["reason"]) <= REASON_CHARS
