"""Servers that do not play fair: credentials in their URL, replies that drip or never end.

Each test talks to the project's test server on 127.0.0.1 (testing/openai_server.py) through
the real backend, with every client it offers.
"""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import BasicAuth

from gramagents.models import BackendSettings, create_backend
from gramagents.records import ChatRequest, Message
from gramagents.testing.openai_server import FakeChatServer

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
