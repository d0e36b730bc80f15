import asyncio
import time

import pytest
from pydantic import BaseModel

from gramagents.errors import BackendUnavailable
from gramagents.models import BackendSettings, Model, create_backend
from gramagents.records import ChatRequest, GenParams, Message
from gramagents.runtime.cache import ResponseCache
from gramagents.testing.openai_server import Fault, last_user_text


def request(text: str, **params) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], params=GenParams(**params))


CLIENT = "openai"


@pytest.fixture(params=["openai", "langchain"], autouse=True)
def client(request):
    """Every test runs with both transports."""
    global CLIENT
    CLIENT = request.param
    yield request.param
    CLIENT = "openai"


def model_for(server, fast_retry, concurrency=4, cache=None, timeout=None) -> Model:
    spec = f"openai:fake@{server.base_url}?client={CLIENT}" + (
        f"&timeout={timeout}" if timeout else ""
    )
    settings = BackendSettings(concurrency=concurrency, retry=fast_retry)
    return Model(create_backend(spec, settings), cache)


async def generate(model: Model, requests: list[ChatRequest]):
    try:
        return await model.generate(requests)
    finally:
        await model.backend.aclose()


def test_generation_sends_the_rendered_messages_and_decoding(fake_server, fast_retry):
    fake_server.responder = lambda body: last_user_text(body).upper()
    model = model_for(fake_server, fast_retry)
    [out] = asyncio.run(generate(model, [request("is it T?", max_tokens=7, temperature=0.0)]))
    assert out.text == "IS IT T?" and out.error is None and out.finish_reason == "stop"
    [body] = fake_server.chat_requests()
    assert body["model"] == "fake"
    assert body["messages"] == [{"role": "user", "content": "is it T?"}]
    assert body["temperature"] == 0.0
    assert (body.get("max_tokens") or body.get("max_completion_tokens")) == 7


def test_requests_in_flight_are_bounded_by_concurrency(fake_server, fast_retry):
    fake_server.delay = 0.05
    model = model_for(fake_server, fast_retry, concurrency=3)
    out = asyncio.run(generate(model, [request(f"q{i}") for i in range(12)]))
    assert all(g.text == "T" for g in out)
    assert fake_server.max_in_flight == 3


def test_rate_limit_waits_for_retry_after(fake_server, fast_retry):
    fake_server.inject(Fault("429", retry_after=0.4))
    model = model_for(fake_server, fast_retry)
    started = time.monotonic()
    [out] = asyncio.run(generate(model, [request("x")]))
    assert out.text == "T"
    assert time.monotonic() - started >= 0.4
    # the SDK's own retries are off: each attempt is ours, sent once and counted once
    assert model.stats.requests_sent == 2 and len(fake_server.chat_requests()) == 2


def test_rate_limit_without_retry_after_backs_off_and_counts_apart(fake_server, fast_retry):
    fake_server.inject(*[Fault("429")] * 4)  # more than the transient budget of 3
    model = model_for(fake_server, fast_retry)
    [out] = asyncio.run(generate(model, [request("x")]))
    assert out.text == "T" and model.stats.requests_sent == 5


def test_server_errors_timeouts_and_malformed_bodies_are_retried(fake_server, fast_retry):
    fake_server.inject(Fault("500"), Fault("malformed"), Fault("timeout", hang_s=3.0))
    model = model_for(fake_server, fast_retry.model_copy(update={"max_attempts": 4}), timeout=0.5)
    [out] = asyncio.run(generate(model, [request("x")]))
    assert out.text == "T" and out.error is None
    assert model.stats.requests_sent == 4 and len(fake_server.chat_requests()) == 4


def test_exhausted_retries_are_a_recorded_failure_that_is_not_cached(
    fake_server, fast_retry, fresh_cache
):
    fake_server.inject(*[Fault("500")] * 3)
    cache = ResponseCache(fresh_cache)
    model = model_for(fake_server, fast_retry, cache=cache)
    [out] = asyncio.run(generate(model, [request("x")]))
    assert out.error is not None and "HTTP 500" in out.error
    assert len(cache) == 0 and model.stats.failed == 1
    [again] = asyncio.run(generate(model, [request("x")]))
    assert again.text == "T" and len(cache) == 1


def test_unreachable_server_fails_the_check_after_retries(fast_retry):
    backend = create_backend("openai:fake@http://127.0.0.1:9/v1", BackendSettings(retry=fast_retry))
    with pytest.raises(BackendUnavailable) as caught:
        asyncio.run(backend.check())
    assert "cannot reach http://127.0.0.1:9/v1 after 3 attempts" in str(caught.value)


def test_a_server_gone_mid_run_stops_the_run_with_one_line(fast_retry):
    spec = f"openai:fake@http://127.0.0.1:9/v1?client={CLIENT}"
    model = Model(create_backend(spec, BackendSettings(retry=fast_retry)))
    with pytest.raises(BackendUnavailable, match="lost the connection to http://127.0.0.1:9/v1"):
        asyncio.run(generate(model, [request("x")]))
    assert model.stats.requests_sent == 3


def test_the_check_reports_a_refused_key(fake_server, fast_retry, monkeypatch):
    fake_server.api_key = "right"
    monkeypatch.setenv("GRAMAGENTS_TEST_KEY", "wrong")
    spec = f"openai:fake@{fake_server.base_url}?client={CLIENT}&api_key_env=GRAMAGENTS_TEST_KEY"
    backend = create_backend(spec, BackendSettings(retry=fast_retry))
    with pytest.raises(BackendUnavailable) as caught:
        asyncio.run(backend.check())
    assert f"{fake_server.base_url} refused the API key (HTTP 401)" in str(caught.value)
    monkeypatch.setenv("GRAMAGENTS_TEST_KEY", "right")
    asyncio.run(create_backend(spec, BackendSettings(retry=fast_retry)).check())  # accepted


def test_a_refused_key_stops_the_run(fake_server, fast_retry):
    fake_server.inject(Fault("401"))
    model = model_for(fake_server, fast_retry)
    with pytest.raises(BackendUnavailable, match="HTTP 401"):
        asyncio.run(generate(model, [request("x")]))
    assert model.stats.requests_sent == 1


def test_a_dropped_connection_is_retried(fake_server, fast_retry):
    fake_server.inject(Fault("disconnect"))
    model = model_for(fake_server, fast_retry)
    [out] = asyncio.run(generate(model, [request("x")]))
    assert out.text == "T" and model.stats.requests_sent == 2


class Answer(BaseModel):
    answer: str
    confidence: int


def test_structured_output_uses_json_mode_and_reasks(fake_server, fast_retry):
    replies = iter(['{"answer": "T"}', '{"answer": "T", "confidence": 3}'])
    fake_server.responder = lambda body: next(replies)
    model = model_for(fake_server, fast_retry)

    async def ask():
        try:
            return await model.structured([Message(role="user", content="T or F?")], Answer)
        finally:
            await model.backend.aclose()

    result = asyncio.run(ask())
    assert result.ok and result.value.model_dump() == {"answer": "T", "confidence": 3}
    first, second = fake_server.chat_requests()
    assert first["response_format"] == {"type": "json_object"}
    assert "confidence" in first["messages"][0]["content"]  # the schema is in the prompt
    assert "confidence" in second["messages"][-1]["content"]  # the validation error is sent back


def test_transport_failures_never_reach_the_prompt(fake_server, fast_retry):
    fake_server.inject(Fault("500"), Fault("500"))
    fake_server.responder = lambda body: '{"answer": "F", "confidence": 1}'
    model = model_for(fake_server, fast_retry)

    async def ask():
        try:
            return await model.structured([Message(role="user", content="T or F?")], Answer)
        finally:
            await model.backend.aclose()

    result = asyncio.run(ask())
    assert result.ok
    for body in fake_server.chat_requests():
        assert all(
            "server error" not in m["content"] and "500" not in m["content"]
            for m in body["messages"]
        )
