"""How the test server (testing/openai_server.py) answers when it must not answer well.

Each function writes one kind of bad reply on an aiohttp request: an error status, a body cut
off halfway, a body sent a byte at a time, a body far too large, a connection dropped.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from typing import Any


def error_response(status: str, retry_after: float | None) -> Any:
    """An error status (`429`, `401`, `500`, `503`) with an OpenAI-shaped error body."""
    from aiohttp import web

    messages = {
        "429": ("rate limited", "rate_limit"),
        "401": ("invalid key", "auth"),
        "500": ("server error", "server"),
        "503": ("overloaded", "server"),
    }
    message, kind = messages[status]
    headers = {}
    if status == "429" and retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    return web.json_response(
        {"error": {"message": message, "type": kind}}, status=int(status), headers=headers
    )


async def truncated(request: Any, payload: dict[str, Any]) -> Any:
    """Promise the whole body in Content-Length, send half of it and close the connection."""
    from aiohttp import web

    data = json.dumps(payload).encode()
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.content_length = len(data)
    await response.prepare(request)
    await response.write(data[: len(data) // 2])
    drop(request, reset=False)
    return response


async def drip(request: Any, payload: dict[str, Any], every: float) -> Any:
    """Send a whole, well-formed body, one byte every `every` seconds."""
    from aiohttp import web

    data = json.dumps(payload).encode()
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.content_length = len(data)
    await response.prepare(request)
    for at in range(len(data)):
        await response.write(data[at : at + 1])
        await asyncio.sleep(every)
    await response.write_eof()
    return response


async def oversized(request: Any, payload: dict[str, Any], size: int) -> Any:
    """Send `payload` with its content padded to make the body `size` bytes.

    In 64 KiB chunks and without a Content-Length, so a client learns the size only by reading.
    """
    from aiohttp import web

    payload["choices"][0]["message"]["content"] += "\0"  # where the padding goes
    head, tail = json.dumps(payload).encode().rsplit(b"\\u0000", 1)
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(head)
    left = max(0, size - len(head) - len(tail))
    block = b"x" * 65536
    while left > 0:
        await response.write(block[: min(left, len(block))])
        left -= len(block)
    await response.write(tail)
    await response.write_eof()
    return response


def drop(request: Any, reset: bool) -> None:
    """Close the request's connection now; with `reset`, as a TCP reset (RST, no FIN)."""
    transport = request.transport
    if transport is None:
        return
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
