"""Servers that do not play fair: credentials in their URL, replies that drip or never end.

Each test talks to the project's test server on 127.0.0.1 (testing/openai_server.py) through
the real backend, with every client it offers.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from aiohttp import BasicAuth

from gramagents.errors import SpecError
from gramagents.models import BackendSettings, create_backend
from gramagents.records import ChatRequest, Message
from gramagents.testing.drills import write_drill_dataset
from gramagents.testing.openai_server import FakeChatServer
from gramagents.workflow.eval import EvalOptions, run_eval

CLIENTS = [(c, h) for c in ("openai", "langchain") for h in ("aiohttp", "httpx")]


def ask(spec: str, retry, count: int = 1):
    """Check the server, then ask it `count` questions (the backend's own answers)."""
    backend = create_backend(spec, BackendSettings(concurrency=4, retry=retry))
    requests = [ChatRequest(messages=[Message(role="user", content=f"q{i}")]) for i in range(count)]

    async def go():
        try:
            await backend.check()
            return await backend.complete(requests)
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(("client", "http"), CLIENTS)
def test_credentials_in_a_url_reach_the_server_as_basic_auth_with_every_client(
    client, http, fast_retry
):
    password = "p@ss:w0rd/1"  # percent-encoded in the URL, as a URL needs
    with FakeChatServer(basic_auth=("user", password)) as server:
        url = server.base_url.replace("http://", "http://user:p%40ss%3Aw0rd%2F1@")
        [out] = ask(f"openai:fake@{url}?client={client}&http={http}", fast_retry)
        received = dict(server.authorizations)
    assert out.error is None and out.text == "T"
    # the check and the question, each with the credentials the URL gave
    assert received == {BasicAuth("user", password).encode(): 2}


def test_a_body_that_drips_is_cut_at_the_timeout_of_the_whole_attempt(fast_retry):
    """One byte every 50 ms (a 300-byte answer takes 15 s) is read under the client's own
    timeout, which waits for the next bytes only; the attempt's deadline stops each attempt at
    `timeout`, and the retries end as one failed request, with its reason."""
    retry = fast_retry.model_copy(update={"max_attempts": 2})
    with FakeChatServer(drip_s=0.05) as server:
        for client, http in CLIENTS:
            started = time.monotonic()
            [out] = ask(
                f"openai:fake@{server.base_url}?timeout=1&client={client}&http={http}", retry
            )
            elapsed = time.monotonic() - started
            assert out.error == "TimeoutError: no whole reply within 1 s (the spec's timeout)"
            assert elapsed < 5, (client, http, elapsed)
        assert server.stats()["chat_requests"] == 2 * len(CLIENTS)


@pytest.mark.parametrize("announced", [True, False])
def test_a_reply_over_the_byte_cap_is_a_failed_request_too_large_asked_once(announced, fast_retry):
    """20 MB sent without a Content-Length is read to the cap and no further; one that
    announces its length is refused from its headers. Neither is retried."""
    size = 20_000_000
    if announced:
        server = FakeChatServer(responder=lambda body: "x" * size)  # a plain JSON reply
    else:
        server = FakeChatServer(reply_bytes=size)  # chunked, no length
    with server:
        for client, http in CLIENTS:
            spec = f"openai:fake@{server.base_url}?max_reply_bytes=1M&client={client}&http={http}"
            started = time.monotonic()
            [out] = ask(spec, fast_retry)
            assert out.error is not None and out.error.startswith("too-large: "), out.error
            assert "over 1048576 bytes" in out.error
            assert time.monotonic() - started < 5
        assert server.stats()["chat_requests"] == len(CLIENTS)  # none asked twice


def test_a_reply_under_the_cap_is_read_whole(fast_retry):
    with FakeChatServer(reply_bytes=1_000_000) as server:
        [out] = ask(f"openai:fake@{server.base_url}", fast_retry)  # the default cap: 1 MiB
    assert out.error is None and len(out.text) > 999_000 and out.text.startswith("T")


@pytest.mark.parametrize("value", ["0", "12", "1x", "-5M", "lots"])
def test_a_byte_cap_that_is_no_size_is_one_spec_error(value):
    with pytest.raises(SpecError, match="max_reply_bytes must be 1K or more"):
        create_backend(f"openai:m@http://127.0.0.1:9/v1?max_reply_bytes={value}")


def test_a_long_answer_is_scored_whole_and_stored_to_the_cap_with_its_length(tmp_path, fast_retry):
    """A 200,000-character answer: read whole (its last word decides), kept in
    `responses.jsonl` to 65,536 characters with its length beside it."""
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 2)
    with FakeChatServer(responder=lambda body: "x" * 199_999 + " T") as server:
        options = EvalOptions(
            models=[f"openai:fake@{server.base_url}"], run_dir=tmp_path / "run", retry=fast_retry
        )
        result = asyncio.run(run_eval(dataset, options))
    assert result.manifest.status == "complete"
    lines = (tmp_path / "run" / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [(len(r["raw"]), r["raw_chars"]) for r in records] == [(65_536, 200_001)] * 2
    assert {r["extracted"] for r in records} == {"T"}
    assert (tmp_path / "run" / "responses.jsonl").stat().st_size < 2 * 70_000
