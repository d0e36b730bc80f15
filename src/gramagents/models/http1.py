"""A small HTTP/1.1 client for JSON APIs: keep-alive connections, one request at a time each.

At tens of requests in flight the client's own CPU time per request decides how close a run
gets to what the server allows (bench/api.py): a general-purpose client such as aiohttp spends
about 0.28 ms of CPU per chat-completion call on a 2-core machine, this one about a third of
that, because it does only what such calls need. A request is one write of pre-encoded
headers and the body; a response is read by an incremental parser that knows bodies framed by
`Content-Length`, by chunked transfer coding, or by the end of the connection, and gzip or
deflate content coding. `http://` and `https://` (TLS with the system's certificates) are
supported; proxies and redirects are not (an API does not redirect its calls).

Failures are `ConnectionFailed` (no connection, or it ended before a whole response) and
`BadResponse` (the bytes are not an HTTP/1.1 response); the caller decides what is retried.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl


class HttpError(Exception):
    """A request got no usable response."""


class ConnectionFailed(HttpError):
    """No connection could be made, or it ended before the response was complete."""


class BadResponse(HttpError):
    """What the server sent is not an HTTP/1.1 response."""


@dataclass
class Response:
    """A complete response."""

    status: int
    headers: dict[str, str]
    """Header names in lower case; repeated headers joined by `, `."""
    body: bytes


MAX_HEAD = 64 * 1024
"""Longest status line and headers accepted."""

_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILERS, _UNTIL_CLOSE = range(6)


class _Connection(asyncio.Protocol):
    """One connection: sends a request and parses its response as the bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[Response] | None = None
        self.closed = False
        self.reusable = True
        self._state = _HEAD
        self._status = 0
        self._headers: dict[str, str] = {}
        self._body = bytearray()
        self._remaining = 0
        self._received = False
        self._no_body = False

    # -- asyncio callbacks ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.waiter is None or self.waiter.done():
            self.reusable = False  # bytes nobody asked for: do not trust this connection
            self.close()
            return
        self._received = True
        self.buffer += data
        try:
            response = self._parse()
        except BadResponse as exc:
            self._fail(exc)
            return
        if response is not None:
            if self.buffer:
                self.reusable = False  # more than one response to one request
            waiter, self.waiter = self.waiter, None
            waiter.set_result(response)

    def eof_received(self) -> bool | None:
        return False  # close the transport; connection_lost finishes what is pending

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.reusable = False
        waiter, self.waiter = self.waiter, None
        if waiter is None or waiter.done():
            return
        if self._state == _UNTIL_CLOSE:
            try:
                waiter.set_result(self._finish())
            except BadResponse as failure:
                waiter.set_exception(failure)
            return
        reason = f" ({exc})" if exc else ""
        waiter.set_exception(
            ConnectionFailed(f"the server closed the connection before a whole response{reason}")
        )

    # -- requests ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (it is not reused)."""
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.transport.close()

    async def exchange(self, request: bytes, no_body: bool = False) -> Response:
        """Send one request and wait for its whole response."""
        assert self.transport is not None and self.waiter is None
        if self.closed or self.transport.is_closing():
            raise ConnectionFailed("the connection is closed")
        self.waiter = asyncio.get_running_loop().create_future()
        self._state = _HEAD
        self._received = False
        self._no_body = no_body
        self.transport.write(request)
        return await self.waiter

    @property
    def received_any(self) -> bool:
        """Whether any byte of the current response has arrived."""
        return self._received

    def _fail(self, exc: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    # -- parsing -------------------------------------------------------------------------------

    def _parse(self) -> Response | None:
        """Advance over the buffer; the response once it is complete."""
        buffer = self.buffer
        while True:
            state = self._state
            if state == _HEAD:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD:
                        raise BadResponse("response headers longer than 64 KiB")
                    return None
                head = bytes(buffer[:end])
                del buffer[: end + 4]
                if self._start(head):
                    continue  # an interim 1xx response: the real one follows
            elif state == _LENGTH:
                if len(buffer) < self._remaining:
                    return None
                self._body += buffer[: self._remaining]
                del buffer[: self._remaining]
                return self._finish()
            elif state == _CHUNK_SIZE:
                end = buffer.find(b"\r\n")
                if end < 0:
                    return None
                text = bytes(buffer[:end]).split(b";", 1)[0].strip()
                del buffer[: end + 2]
                try:
                    size = int(text, 16)
                except ValueError:
                    raise BadResponse(f"bad chunk size {text[:20]!r}") from None
                self._remaining = size
                self._state = _CHUNK_DATA if size else _TRAILERS
            elif state == _CHUNK_DATA:
                if len(buffer) < self._remaining + 2:
                    return None
                if buffer[self._remaining : self._remaining + 2] != b"\r\n":
                    raise BadResponse("chunk not followed by CRLF")
                self._body += buffer[: self._remaining]
                del buffer[: self._remaining + 2]
                self._state = _CHUNK_SIZE
            elif state == _TRAILERS:
                end = buffer.find(b"\r\n")
                if end < 0:
                    return None
                del buffer[: end + 2]
                if end == 0:
                    return self._finish()
            else:  # _UNTIL_CLOSE: everything up to the end of the connection
                self._body += buffer
                buffer.clear()
                return None

    def _start(self, head: bytes) -> bool:
        """Read a status line and headers and pick the body's framing; True for a 1xx."""
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise BadResponse(f"not an HTTP/1.x status line: {lines[0][:60]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep:
                raise BadResponse(f"bad header line {line[:60]!r}")
            key = name.strip().lower().decode("latin-1")
            text = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if 100 <= status < 200:
            return True
        self._status = status
        self._headers = headers
        self._body = bytearray()
        connection = headers.get("connection", "").lower()
        if "close" in connection or (parts[0] == b"HTTP/1.0" and "keep-alive" not in connection):
            self.reusable = False
        if self._no_body or status in (204, 304):
            self._remaining = 0
            self._state = _LENGTH
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = _CHUNK_SIZE
        elif "content-length" in headers:
            try:
                self._remaining = int(headers["content-length"].split(",")[0])
            except ValueError:
                raise BadResponse(
                    f"bad Content-Length {headers['content-length'][:20]!r}"
                ) from None
            self._state = _LENGTH
        else:
            self.reusable = False
            self._state = _UNTIL_CLOSE
        return False

    def _finish(self) -> Response:
        self._state = _HEAD
        body = bytes(self._body)
        self._body = bytearray()
        coding = self._headers.get("content-encoding", "").lower()
        if coding in ("gzip", "x-gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47 if "gzip" in coding else 15)
            except zlib.error:
                try:  # some servers send raw deflate without the zlib header
                    body = zlib.decompress(body, -15)
                except zlib.error as exc:
                    raise BadResponse(f"body is not valid {coding} ({exc})") from None
        elif coding not in ("", "identity"):
            raise BadResponse(f"unsupported Content-Encoding '{coding}'")
        return Response(self._status, self._headers, body)


class Http1Client:
    """Requests to one server over at most `limit` keep-alive connections."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str] | None = None,
        limit: int = 16,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url}")
        self.host = url.hostname
        self.port = url.port or (443 if url.scheme == "https" else 80)
        self.prefix = url.path.rstrip("/")
        self.ssl: ssl.SSLContext | None = None
        if url.scheme == "https":
            import ssl  # only for TLS: its import is a noticeable part of a run's start

            self.ssl = ssl_context or ssl.create_default_context()
        self.limit = max(1, limit)
        authority = url.netloc.rpartition("@")[2]
        fields = {
            "Host": authority,
            "User-Agent": "gramagents",
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            **(headers or {}),
        }
        self._head = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("latin-1")
        self._idle: list[_Connection] = []
        self._open = 0
        self._waiters: deque[asyncio.Future[_Connection | None]] = deque()
        self._closed = False

    async def request(
        self, method: str, path: str, body: bytes | None = None, content_type: str | None = None
    ) -> Response:
        """Send `method path` (relative to the base URL) and return the whole response."""
        head = [f"{method} {self.prefix}{path} HTTP/1.1\r\n".encode("latin-1"), self._head]
        if body is not None:
            if content_type:
                head.append(f"Content-Type: {content_type}\r\n".encode("latin-1"))
            head.append(b"Content-Length: %d\r\n" % len(body))
        head.append(b"\r\n")
        message = b"".join(head) + (body or b"")
        no_body = method == "HEAD"
        connection, reused = await self._acquire()
        try:
            response = await connection.exchange(message, no_body)
        except ConnectionFailed:
            connection.close()
            self._open -= 1  # the dead connection leaves its slot...
            if not reused or connection.received_any:
                self._wake(None)
                raise
            # ...and, when it was an idle connection the server had just closed (the request
            # never reached it), the request takes the slot again at once on a fresh
            # connection, as HTTP libraries do.
            connection = await self._connect_slot()
            try:
                response = await connection.exchange(message, no_body)
            except BaseException:
                self._drop(connection)
                raise
        except BaseException:
            self._drop(connection)  # cancelled or timed out: never reuse it mid-response
            raise
        self._release(connection)
        return response

    async def close(self) -> None:
        """Close every connection."""
        self._closed = True
        for connection in self._idle:
            connection.close()
        self._idle.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(ConnectionFailed("the client was closed"))

    # -- the pool ------------------------------------------------------------------------------

    async def _acquire(self) -> tuple[_Connection, bool]:
        """An idle connection (True: reused) or a new one, waiting while `limit` are busy."""
        while True:
            if self._closed:
                raise ConnectionFailed("the client was closed")
            while self._idle:
                connection = self._idle.pop()
                if connection.reusable and not connection.closed:
                    return connection, True
                self._open -= 1
            if self._open < self.limit:
                return await self._connect_slot(), False
            waiter: asyncio.Future[_Connection | None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed over as we were cancelled
                    given = waiter.result()
                    if given is not None:
                        self._release(given)
                    else:
                        self._wake(None)
                raise
            if handed is not None:
                return handed, True

    async def _connect_slot(self) -> _Connection:
        """Open a connection in a slot of the pool (counted until released)."""
        self._open += 1
        loop = asyncio.get_running_loop()
        try:
            _, protocol = await loop.create_connection(
                _Connection,
                self.host,
                self.port,
                ssl=self.ssl,
                server_hostname=self.host if self.ssl else None,
            )
        except BaseException as exc:
            self._open -= 1
            self._wake(None)
            if isinstance(exc, OSError):
                raise ConnectionFailed(
                    f"cannot connect to {self.host}:{self.port} ({exc.strerror or exc})"
                ) from exc
            raise
        return protocol

    def _drop(self, connection: _Connection) -> None:
        """Close a connection that was in use and free its slot."""
        connection.close()
        self._open -= 1
        self._wake(None)

    def _release(self, connection: _Connection) -> None:
        """Give a connection back: to a waiting request, to the idle list, or closed."""
        if connection.reusable and not connection.closed and not self._closed:
            if self._wake(connection):
                return
            self._idle.append(connection)
            return
        self._drop(connection)

    def _wake(self, connection: _Connection | None) -> bool:
        """Hand `connection` (or, with None, a free slot) to the first waiting request."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return True
        return False
