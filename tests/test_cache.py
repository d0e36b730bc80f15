import asyncio
import sqlite3

import pytest

from gramagents.models import Model, create_backend
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import ChatRequest, GenParams, Message
from gramagents.runtime.cache import NullCache, ResponseCache, content_key


def request(text: str, **kwargs) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)], **kwargs)


def key(spec: str, req: ChatRequest) -> str:
    return Model(create_backend(spec)).request_key(req)


def test_key_changes_with_prompt_model_base_url_params_and_sample(monkeypatch):
    base = request("Does it contain T?", prompt_hash="p1")
    spec = "openai:m@http://127.0.0.1:9000/v1"
    reference = key(spec, base)
    assert key(spec, base) == reference
    assert key(spec, request("Does it contain F?", prompt_hash="p1")) != reference
    assert key(spec, request("Does it contain T?", prompt_hash="p2")) != reference
    assert key("openai:other@http://127.0.0.1:9000/v1", base) != reference
    assert key("openai:m@http://127.0.0.1:9001/v1", base) != reference
    assert (
        key(spec, request("Does it contain T?", prompt_hash="p1", params=GenParams(max_tokens=5)))
        != reference
    )
    assert key(spec, request("Does it contain T?", prompt_hash="p1", sample=1)) != reference
    assert (
        key(
            spec,
            base.model_copy(
                update={"response_schema": {"type": "object"}, "structured_mode": "json"}
            ),
        )
        != reference
    )


def test_batch_size_and_concurrency_are_not_in_the_key():
    from gramagents.models import BackendSettings

    req = request("x")
    assert key("smollm2", req) == key("smollm2?batch_size=3", req)
    a = Model(create_backend("openai:m@http://h/v1", BackendSettings(concurrency=1)))
    b = Model(create_backend("openai:m@http://h/v1", BackendSettings(concurrency=64)))
    assert a.request_key(req) == b.request_key(req)
    # the dtype changes the numbers, so it is in the key (the default is whatever `auto` picks
    # on this hardware, and keys the same as naming that dtype)
    assert key("smollm2?dtype=float32", req) != key("smollm2?dtype=bfloat16", req)
    default = create_backend("smollm2").dtype
    assert key("smollm2", req) == key(f"smollm2?dtype={default}", req)


def test_answers_are_served_from_the_cache_and_errors_are_not_cached(fresh_cache):
    calls = {"n": 0}

    def flaky(req: ChatRequest) -> str:
        calls["n"] += 1
        if "boom" in req.messages[0].content and calls["n"] < 3:
            raise RuntimeError("backend exploded")
        return "T"

    ScriptedBackend.register("flaky", flaky)
    cache = ResponseCache(fresh_cache)
    model = Model(create_backend("scripted:flaky"), cache)
    first = asyncio.run(model.generate([request("fine"), request("boom")]))
    assert first[0].text == "T" and first[1].error and "exploded" in first[1].error
    assert len(cache) == 1
    again = asyncio.run(model.generate([request("fine"), request("boom")]))
    assert again[0].cached and not again[1].cached and again[1].text == "T"
    assert (
        model.stats.cache_hits == 1 and model.stats.requests_sent == 3 and model.stats.failed == 1
    )
    assert len(cache) == 2


def test_duplicate_requests_in_one_batch_are_asked_once(fresh_cache):
    ScriptedBackend.register("echo", lambda r: r.messages[-1].content.upper())
    model = Model(create_backend("scripted:echo"), ResponseCache(fresh_cache))
    out = asyncio.run(model.generate([request("a"), request("b"), request("a")]))
    assert [g.text for g in out] == ["A", "B", "A"]
    assert model.stats.requests_sent == 2
    assert model.stats.shared == 1 and model.stats.cache_hits == 0  # asked once, said so


def test_cache_is_sqlite_in_wal_mode_and_persists(fresh_cache):
    cache = ResponseCache(fresh_cache)
    cache.put_many({content_key({"k": 1}): {"text": "T"}})
    cache.close()
    db = sqlite3.connect(fresh_cache)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened = ResponseCache(fresh_cache)
    assert reopened.get_many([content_key({"k": 1}), "missing"]) == {
        content_key({"k": 1}): {"text": "T"}
    }


def test_null_cache_finds_and_keeps_nothing():
    cache = NullCache()
    cache.put_many({"a": {"x": 1}})
    assert cache.get_many(["a"]) == {}


@pytest.mark.parametrize("value", [{"b": 1, "a": [1, 2]}, {"a": [1, 2], "b": 1}])
def test_content_key_is_canonical(value):
    assert content_key(value) == content_key({"a": [1, 2], "b": 1})


def test_fast_batch_keys_equal_the_canonical_content_key():
    from gramagents.records import LoglikelihoodRequest
    from gramagents.runtime.cache import content_key

    model = Model(create_backend("scripted:echo"))
    chats = [
        ChatRequest(messages=[Message(role="user", content=text)], sample=i)
        for i, text in enumerate(["是不是", 'x\n"y"', ""])
    ]
    pairs = [LoglikelihoodRequest(context="", continuation="The cat sleeps.")]
    for request, key in zip(chats, model.chat_keys(chats), strict=True):
        expected = {
            "kind": "chat",
            "model": model.identity,
            "request": request.model_dump(mode="json"),
        }
        assert key == content_key(expected)
    for request, key in zip(pairs, model.likelihood_keys(pairs), strict=True):
        expected = {
            "kind": "loglikelihood",
            "model": model.identity,
            "request": request.model_dump(mode="json"),
        }
        assert key == content_key(expected)


def test_a_one_by_one_backend_s_scores_are_kept_when_another_request_fails(fresh_cache):
    from gramagents.errors import BackendUnavailable
    from gramagents.records import Loglikelihood, LoglikelihoodRequest

    class OneByOne(ScriptedBackend):  # as a server: each request on its own
        answers_one_by_one = True
        supports_loglikelihood = True

        async def loglikelihood(self, requests):
            [one] = requests
            if one.continuation == "lost":
                await asyncio.sleep(0.05)  # the others have been answered by then
                raise BackendUnavailable("server gone")
            return [Loglikelihood(logprob=-1.0, mean_logprob=-1.0, n_tokens=1, greedy=True)]

    ScriptedBackend.register("pairs", lambda r: "")
    backend = create_backend("scripted:pairs")
    backend.__class__ = OneByOne
    cache = ResponseCache(fresh_cache)
    model = Model(backend, cache)
    asked = [LoglikelihoodRequest(context="", continuation=c) for c in ("a", "b", "lost", "c")]
    with pytest.raises(BackendUnavailable):
        asyncio.run(model.loglikelihood(asked))
    assert len(cache) == 3  # every score that arrived before the failure was kept


def test_duplicate_scoring_requests_in_one_batch_are_scored_once_and_counted(fresh_cache):
    from gramagents.records import Loglikelihood, LoglikelihoodRequest

    scored: list[str] = []

    class Pairs(ScriptedBackend):
        supports_loglikelihood = True

        async def loglikelihood(self, requests):
            scored.extend(r.continuation for r in requests)
            self.stats.requests_sent += len(requests)
            return [
                Loglikelihood(
                    logprob=-len(r.continuation), mean_logprob=-1.0, n_tokens=1, greedy=True
                )
                for r in requests
            ]

    ScriptedBackend.register("pairs-once", lambda r: "")
    backend = create_backend("scripted:pairs-once")
    backend.__class__ = Pairs
    model = Model(backend, ResponseCache(fresh_cache))
    asked = [LoglikelihoodRequest(context="", continuation=c) for c in ("ab", "c", "ab")]
    out = asyncio.run(model.loglikelihood(asked))
    assert [o.logprob for o in out] == [-2.0, -1.0, -2.0] and scored == ["ab", "c"]
    assert (model.stats.requests_sent, model.stats.shared, model.stats.cache_hits) == (2, 1, 0)
