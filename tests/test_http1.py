"""The keep-alive HTTP/1.1 client behind `client=direct`, against servers on 127.0.0.1.

A scripted raw TCP server sends exactly the bytes a test gives it (framings, interim
responses, dropped connections, garbage); the chat server checks TLS end to end with a
self-signed certificate made for these tests (`tests/data/localhost-*.pem`, for 127.0.0.1
only, valid until 2126).
"""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gramagents.errors import BackendUnavailable
from gramagents.models import BackendSettings, create_backend
from gramagents.models.http1 import BadResponse, ConnectionFailed, Http1Client
from gramagents.records import ChatRequest, Message
from gramagents.testing.openai_server import FakeChatServer

DATA = Path(__file__).parent / "data"
CERT, KEY = DATA / "localhost-cert.pem", DATA / "localhost-key.pem"

Action = Callable[[asyncio.StreamWriter], Awaitable[None]]


def reply(*pieces: bytes, close: bool = False, pause: float = 0.0) -> Action:
    """Write `pieces` (pausing between them, so they arrive apart), then maybe close."""

    async def act(writer: asyncio.StreamWriter) -> None:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
        if close:
            writer.close()

    return act


def ok(body: bytes = b'{"ok": true}', extra: bytes = b"") -> Action:
    return reply(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n" % (len(body), extra) + body)


async def hang(writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(30)


@dataclass
class ScriptedServer:
    """Answers each request with the next action; records requests and connections."""

    actions: deque[Action] = field(default_factory=deque)
    requests: list[tuple[int, bytes, bytes]] = field(default_factory=list)
    """(connection number, head, body) of every request received."""
    connections: int = 0
    open_now: int = 0
    most_open: int = 0
    port: int = 0

    async def start(self) -> asyncio.Server:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        return server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                    return  # the client went away, or the test is over
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                self.requests.append((number, head, body))
                action = self.actions.popleft() if self.actions else ok()
                await action(writer)
                if writer.is_closing():
                    return
        finally:
            self.open_now -= 1
            writer.close()


def run(script: list[Action], test: Callable[[ScriptedServer], Awaitable[None]]) -> ScriptedServer:
    scripted = ScriptedServer(actions=deque(script))

    async def main() -> None:
        server = await scripted.start()
        try:
            await test(scripted)
        finally:
            server.close()

    asyncio.run(main())
    return scripted


def test_requests_reuse_one_connection_and_carry_the_headers():
    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url, headers={"Authorization": "Bearer k"}, limit=4)
        for i in range(3):
            body = b'{"n": %d}' % i
            response = await client.request("POST", "/chat/completions", body, "application/json")
            assert response.status == 200 and response.body == b'{"ok": true}'
        await client.close()

    server = run([], test)
    assert server.connections == 1 and len(server.requests) == 3
    number, head, body = server.requests[2]
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in lines and "Authorization: Bearer k" in lines
    assert "Content-Type: application/json" in lines and "Content-Length: 8" in lines
    assert body == b'{"n": 2}'


def test_a_chunked_body_arriving_in_pieces_is_reassembled():
    chunked = reply(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n",
        b"X-Late: 1\r\n\r\n5;name=ext\r\nhel",
        b"lo\r\n",
        b"6\r\n world\r\n0\r\nX-Trailer: t\r\n",
        b"\r\n",
        pause=0.01,
    )

    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        first = await client.request("GET", "/a")
        second = await client.request("GET", "/b")  # the connection is still usable
        assert first.body == b"hello world" and first.headers["x-late"] == "1"
        assert second.body == b'{"ok": true}'
        await client.close()

    assert run([chunked], test).connections == 1


def test_connection_close_and_a_body_ended_by_close_are_not_reused():
    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        assert (await client.request("GET", "/a")).body == b"abc"
        assert (await client.request("GET", "/b")).body == b"until the end"
        assert (await client.request("GET", "/c")).body == b'{"ok": true}'
        await client.close()

    server = run(
        [
            ok(b"abc", b"Connection: close\r\n"),
            reply(b"HTTP/1.1 200 OK\r\n\r\nuntil ", b"the end", close=True, pause=0.01),
        ],
        test,
    )
    assert [number for number, _, _ in server.requests] == [1, 2, 3]


def test_gzip_bodies_are_decoded_and_interim_responses_skipped():
    packed = gzip.compress(b'{"answer": "T"}')

    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        response = await client.request("POST", "/x", b"{}")
        assert response.status == 200 and response.body == b'{"answer": "T"}'
        await client.close()

    run(
        [
            reply(
                b"HTTP/1.1 100 Continue\r\n\r\n",
                b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
                % len(packed)
                + packed,
            )
        ],
        test,
    )


def test_an_idle_connection_the_server_dropped_is_replaced_without_an_error():
    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        await client.request("GET", "/a")
        await client.request("GET", "/b")  # the server closes on receiving it, answering nothing
        await asyncio.sleep(0.05)
        await client.request("GET", "/c")  # closed while idle: noticed before sending
        await client.close()

    answer_then_close = reply(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", close=True)
    server = run([ok(), reply(close=True), answer_then_close, ok()], test)
    # /b was sent twice: on the dropped connection, then once more on a fresh one
    assert [head.split(b" ")[1] for _, head, _ in server.requests] == [
        b"/v1/a",
        b"/v1/b",
        b"/v1/b",
        b"/v1/c",
    ]
    assert server.connections == 3


def test_a_connection_dropped_mid_response_fails_and_is_not_resent():
    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        with pytest.raises(ConnectionFailed, match="before a whole response"):
            await client.request("GET", "/a")
        with pytest.raises(ConnectionFailed):  # a fresh connection closed at once: no resend
            await client.request("GET", "/b")
        await client.close()

    server = run(
        [
            reply(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\npartial", close=True),
            reply(close=True),
        ],
        test,
    )
    assert len(server.requests) == 2


def test_garbage_is_a_bad_response_and_a_closed_port_a_failed_connection():
    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url)
        with pytest.raises(BadResponse, match="status line"):
            await client.request("GET", "/a")
        with pytest.raises(BadResponse, match="chunk size"):
            await client.request("GET", "/b")
        await client.close()
        closed = Http1Client("http://127.0.0.1:9/v1")
        with pytest.raises(ConnectionFailed, match="cannot connect to 127.0.0.1:9"):
            await closed.request("GET", "/models")

    run(
        [
            reply(b"hello there\r\n\r\n"),
            reply(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ],
        test,
    )


def test_connections_are_bounded_by_the_limit():
    async def slow(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.05)
        await ok()(writer)

    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url, limit=2)
        answers = await asyncio.gather(*(client.request("GET", f"/{i}") for i in range(7)))
        assert all(a.status == 200 for a in answers)
        await client.close()

    server = run([slow] * 7, test)
    assert server.most_open == 2 and server.connections == 2 and len(server.requests) == 7


def test_a_cancelled_request_never_hands_its_late_answer_to_the_next():
    async def late(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.2)
        await ok(b"late")(writer)

    async def test(server: ScriptedServer) -> None:
        client = Http1Client(server.url, limit=1)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await client.request("GET", "/slow")
        assert (await client.request("GET", "/next")).body == b"fresh"
        await client.close()

    server = run([late, ok(b"fresh")], test)
    assert [number for number, _, _ in server.requests] == [1, 2]


def _server_tls() -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(CERT, KEY)
    return context


def test_https_end_to_end_with_a_trusted_certificate(monkeypatch, fast_retry):
    monkeypatch.setenv("SSL_CERT_FILE", str(CERT))  # what the system's store would hold
    with FakeChatServer(ssl_context=_server_tls()) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        backend = create_backend(
            f"openai:fake@{server.base_url}", BackendSettings(retry=fast_retry)
        )

        async def main() -> str:
            try:
                await backend.check()
                [out] = await backend.complete(
                    [ChatRequest(messages=[Message(role="user", content="x")])]
                )
                return out.text
            finally:
                await backend.aclose()

        assert asyncio.run(main()) == "T"
        assert len(server.chat_requests()) == 1


def test_https_with_an_untrusted_certificate_stops_at_the_check(fast_retry):
    with FakeChatServer(ssl_context=_server_tls()) as server:
        backend = create_backend(
            f"openai:fake@{server.base_url}", BackendSettings(retry=fast_retry)
        )
        with pytest.raises(BackendUnavailable, match="certificate verify failed"):
            asyncio.run(backend.check())
        assert server.chat_requests() == []
