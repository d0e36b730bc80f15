"""`gramagents view --serve`: the site over HTTP on 127.0.0.1, with the standard library."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Say nothing."""


def make_server(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server of `folder` on 127.0.0.1 (`port` 0: any free port); call `serve_forever`."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def address(server: ThreadingHTTPServer, page: str = "report.html") -> str:
    """The URL of `page` on `server`."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/{page}"
