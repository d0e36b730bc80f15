"""`gramagents view --serve`: the site over HTTP on 127.0.0.1, with the standard library.

Only the site is served: `report.html` and the files under `view/`, never the rest of the
folder it was written into (a run folder holds the records and the manifest). There is no
directory listing, and no link is followed: a symbolic link on the way to a file, or a file
with another name (a hard link), is not served, so a link inside `view/` cannot give the run's
`responses.jsonl` (or anything else) away. A request whose
`Host` is not this server's own address is refused, so a web page in the same browser cannot
reach the server through a name of its own (DNS rebinding).
"""

from __future__ import annotations

import functools
import os
import stat
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

PAGE = "report.html"
FOLDER = "view"


class SiteHandler(SimpleHTTPRequestHandler):
    """Serves the site's files only, quietly (no log line per request)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Say nothing."""

    def send_head(self) -> Any:
        """Refuse a foreign `Host` and anything that is not a file of the site."""
        if not self._host_is_ours():
            self.send_error(HTTPStatus.MISDIRECTED_REQUEST, "unknown host")
            return None
        relative = unquote(urlsplit(self.path).path).lstrip("/")
        if relative == "":
            self.send_response(HTTPStatus.FOUND)
            self.send_header("Location", f"/{PAGE}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if not self._is_site_file(relative):
            self.send_error(HTTPStatus.NOT_FOUND, "not a file of the site")
            return None
        return super().send_head()

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """No listings."""
        self.send_error(HTTPStatus.NOT_FOUND, "no listing")

    def _host_is_ours(self) -> bool:
        host = self.headers.get("Host", "")
        port = self.server.server_address[1]
        return host in {f"127.0.0.1:{port}", f"localhost:{port}"}

    def _is_site_file(self, relative: str) -> bool:
        parts = Path(relative).parts
        if not parts or ".." in parts or "\\" in relative or "\x00" in relative:
            return False
        if parts != (PAGE,) and (parts[0] != FOLDER or len(parts) < 2):
            return False
        root = Path(self.directory)
        target = root.joinpath(*parts)
        for depth in range(1, len(parts) + 1):  # no link on the way, the file itself included
            if root.joinpath(*parts[:depth]).is_symlink():
                return False
        try:
            found = target.stat()
        except OSError:
            return False
        return stat.S_ISREG(found.st_mode) and found.st_nlink == 1


def make_server(folder: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server of the site in `folder` on 127.0.0.1 (`port` 0: any free port).

    Call `serve_forever`.
    """
    handler = functools.partial(SiteHandler, directory=str(folder))
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def address(server: ThreadingHTTPServer, page: str = PAGE) -> str:
    """The URL of `page` on `server`."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/{page}"
