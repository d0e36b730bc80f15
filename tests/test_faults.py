"""The fault-injecting chat server: each kind of fault as the client meets it; seeded plans."""

import asyncio
import json
from collections import Counter

import pytest
from pydantic import BaseModel

from gramagents.models import BackendSettings, Model, create_backend
from gramagents.records import ChatRequest, GenParams, Message
from gramagents.testing.faults import PLAN_KINDS, FaultPlan, body_digest
from gramagents.testing.openai_server import FakeChatServer, Fault, last_user_text


class Verdict(BaseModel):
    natural: bool
    reason: str


def request(text: str) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], params=GenParams())


def model_for(server, fast_retry, http="aiohttp", timeout=0.5) -> Model:
    spec = f"openai:fake@{server.base_url}?timeout={timeout}&http={http}"
    return Model(create_backend(spec, BackendSettings(concurrency=4, retry=fast_retry)))


async def closing(model: Model, coroutine):
    try:
        return await coroutine
    finally:
        await model.backend.aclose()


@pytest.mark.parametrize("http", ["aiohttp", "httpx"])
@pytest.mark.parametrize(
    "kind", ["429", "500", "503", "reset", "disconnect", "slow", "truncated", "malformed"]
)
def test_each_fault_is_retried_and_the_answer_arrives(kind, http, fast_retry):
    with FakeChatServer(responder=lambda body: last_user_text(body).upper()) as server:
        server.inject(Fault(kind, retry_after=0.05, hang_s=1.5))
        model = model_for(server, fast_retry, http)
        [out] = asyncio.run(closing(model, model.generate([request("is it t?")])))
        assert out.error is None and out.text == "IS IT T?"
        assert model.stats.requests_sent == 2
        assert server.counts == Counter({kind: 1, "answered": 1})


def test_a_reply_cut_off_halfway_is_a_malformed_reply_not_a_lost_server(fast_retry):
    with FakeChatServer() as server:
        server.inject(*[Fault("truncated")] * 3)  # the whole transient budget
        model = model_for(server, fast_retry)
        [out] = asyncio.run(closing(model, model.generate([request("x")])))
    assert (
        out.text == ""
        and out.error == "MalformedReply: the reply stopped before the length it announced"
    )


def test_output_that_fails_the_schema_is_asked_again_with_the_error(fast_retry):
    answer = json.dumps({"natural": True, "reason": "a plain sentence"})
    with FakeChatServer(responder=lambda body: answer) as server:
        server.inject(Fault("invalid"))
        model = model_for(server, fast_retry)
        outcome = asyncio.run(
            closing(model, model.structured([Message(role="user", content="ok?")], Verdict))
        )
        bodies = server.chat_requests()
    assert outcome.value is not None
    assert outcome.value.model_dump() == {"natural": True, "reason": "a plain sentence"}
    assert outcome.attempts == 2 and server.counts == Counter({"invalid": 1, "answered": 1})
    assert len(bodies[1]["messages"]) > len(bodies[0]["messages"])  # the re-ask names the error


def test_a_plan_is_a_function_of_seed_body_and_repeat_only():
    plan = FaultPlan(rate=0.2, seed=3)
    digests = [
        body_digest({"messages": [{"role": "user", "content": f"q{i}"}]}) for i in range(20_000)
    ]
    first = [plan.choose(d, 0, structured=False) for d in digests]
    again = [plan.choose(d, 0, structured=False) for d in reversed(digests)][::-1]
    assert [f and f.kind for f in first] == [f and f.kind for f in again]
    kinds = Counter(f.kind for f in first if f is not None)
    assert 0.19 < sum(kinds.values()) / len(digests) < 0.21
    assert set(kinds) == set(PLAN_KINDS) - {"invalid"}  # plain requests never get `invalid`
    assert min(kinds.values()) > 0.8 * max(kinds.values())  # kinds drawn evenly
    structured = Counter(
        f.kind for d in digests if (f := plan.choose(d, 0, structured=True)) is not None
    )
    assert set(structured) == set(PLAN_KINDS)
    # a repeat of the same body is a fresh draw: a failed request is not doomed to fail again
    repeats = [plan.choose(d, 1, structured=False) for d in digests]
    both = sum(1 for a, b in zip(first, repeats, strict=True) if a and b)
    assert 0.03 < both / len(digests) < 0.05
    other_seed = FaultPlan(rate=0.2, seed=4)
    assert [f and f.kind for f in first[:200]] != [
        f and f.kind for f in (other_seed.choose(d, 0, False) for d in digests[:200])
    ]


def test_a_plan_rejects_unknown_kinds_and_rates():
    with pytest.raises(ValueError, match="unknown fault kind"):
        FaultPlan(rate=0.1, kinds=("418",))
    with pytest.raises(ValueError, match="between 0 and 1"):
        FaultPlan(rate=1.5)


def test_the_server_counts_every_request_by_outcome(fast_retry):
    plan = FaultPlan(rate=0.3, seed=11, kinds=("500", "503", "malformed"))
    with FakeChatServer(plan=plan) as server:
        model = model_for(server, fast_retry)
        out = asyncio.run(closing(model, model.generate([request(f"q{i}") for i in range(60)])))
        stats = server.stats()
    assert stats["counts"]["answered"] == sum(1 for g in out if g.error is None) > 50
    assert sum(stats["counts"].values()) == stats["chat_requests"] == model.stats.requests_sent
    assert stats["chat_requests"] > 60 and set(stats["counts"]) <= {"answered", *plan.kinds}
