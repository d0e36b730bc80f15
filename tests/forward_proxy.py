"""A small forward HTTP proxy on 127.0.0.1 for tests: what an institutional proxy does.

It takes `METHOD http://host:port/path` requests (forwarded upstream in origin form, one per
connection) and `CONNECT host:port` tunnels (for https), and records the request line of each.
"""

from __future__ import annotations

import asyncio
import threading
from urllib.parse import urlsplit


class ForwardProxy:
    """The proxy, serving in a background thread; use as a context manager."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    @property
    def url(self) -> str:
        """The proxy's URL, as `HTTP_PROXY` takes it."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ForwardProxy:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(10), "the proxy did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        first, *headers = head.decode("latin-1").split("\r\n")
        method, target, version = first.split(" ", 2)
        self.seen.append(f"{method} {target}")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
        else:
            url = urlsplit(target)
            up_reader, up_writer = await asyncio.open_connection(url.hostname, url.port or 80)
            path = url.path + (f"?{url.query}" if url.query else "")
            kept = [
                h
                for h in headers
                if h and not h.lower().startswith(("proxy-", "connection:", "keep-alive:"))
            ]
            up_writer.write(
                "\r\n".join(
                    [f"{method} {path} {version}", *kept, "Connection: close", "", ""]
                ).encode("latin-1")
            )
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()
