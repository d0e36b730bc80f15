"""What an OpenAI-compatible server is reached through: proxies and certificates from the
environment, on both HTTP clients the openai SDK offers.

The https server uses a self-signed certificate made for these tests
(`tests/data/localhost-*.pem`, for 127.0.0.1 only, valid until 2126).
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest

from gramagents.errors import BackendUnavailable
from gramagents.models import BackendSettings, create_backend
from gramagents.records import ChatRequest, Message
from gramagents.testing.openai_server import FakeChatServer

from .forward_proxy import ForwardProxy

DATA = Path(__file__).parent / "data"
CERT, KEY = DATA / "localhost-cert.pem", DATA / "localhost-key.pem"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_from_outside(monkeypatch):
    """Each test sets the proxy variables it means; none leak in from the machine."""
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture(params=["aiohttp", "httpx"])
def http(request) -> str:
    return request.param


def ask(spec: str, fast_retry) -> str:
    backend = create_backend(spec, BackendSettings(retry=fast_retry))

    async def main() -> str:
        try:
            await backend.check()
            [out] = await backend.complete(
                [ChatRequest(messages=[Message(role="user", content="x")])]
            )
            assert out.error is None, out.error
            return out.text
        finally:
            await backend.aclose()

    return asyncio.run(main())


def _server_tls() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(CERT, KEY)
    return context


def test_requests_go_through_the_proxy_the_environment_names(
    fake_server, fast_retry, monkeypatch, http
):
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        assert ask(f"openai:fake@{fake_server.base_url}?http={http}", fast_retry) == "T"
    assert len(fake_server.chat_requests()) == 1
    assert f"POST {fake_server.base_url}/chat/completions" in proxy.seen
    assert f"GET {fake_server.base_url}/models" in proxy.seen


def test_no_proxy_sends_the_named_hosts_direct(fake_server, fast_retry, monkeypatch, http):
    with ForwardProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert ask(f"openai:fake@{fake_server.base_url}?http={http}", fast_retry) == "T"
    assert len(fake_server.chat_requests()) == 1
    assert proxy.seen == []


def test_https_through_a_proxy_tunnel_with_a_private_ca(fast_retry, monkeypatch, http):
    monkeypatch.setenv("SSL_CERT_FILE", str(CERT))  # the private CA a user points to
    with FakeChatServer(ssl_context=_server_tls()) as server, ForwardProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        assert ask(f"openai:fake@{server.base_url}?http={http}", fast_retry) == "T"
        assert len(server.chat_requests()) == 1
    assert f"CONNECT 127.0.0.1:{server.port}" in proxy.seen


def test_https_end_to_end_with_a_trusted_certificate(monkeypatch, fast_retry, http):
    monkeypatch.setenv("SSL_CERT_FILE", str(CERT))  # what the system's store would hold
    with FakeChatServer(ssl_context=_server_tls()) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        assert ask(f"openai:fake@{server.base_url}?http={http}", fast_retry) == "T"
        assert len(server.chat_requests()) == 1


def test_https_with_an_untrusted_certificate_stops_at_the_check(fast_retry, http):
    with FakeChatServer(ssl_context=_server_tls()) as server:
        backend = create_backend(
            f"openai:fake@{server.base_url}?http={http}", BackendSettings(retry=fast_retry)
        )

        async def check() -> None:
            try:
                await backend.check()
            finally:
                await backend.aclose()

        with pytest.raises(BackendUnavailable, match="certificate verify failed"):
            asyncio.run(check())
        assert server.chat_requests() == []
