"""How chat-completion requests reach an OpenAI-compatible server.

- `direct` (the default): the plain JSON of the chat-completions protocol over a small
  keep-alive HTTP/1.1 client (models/http1.py), one per event loop. At tens of requests in
  flight the client's own CPU time decides the throughput; this is the leanest path
  (bench/api.py measures it).
- `langchain`: langchain-openai's `ChatOpenAI` (on the openai SDK), for users who want that
  stack's behaviour; its own retries are off, ours apply.

Both raise `ApiError` for an HTTP error status, `Unreachable` when no connection could be made,
and `asyncio.TimeoutError` or `MalformedReply` for the rest; the backend decides what is
retried.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import SecretStr


class ApiError(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        self.status = status
        self.message = message
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        super().__init__(f"HTTP {status}: {message}")


class Unreachable(Exception):
    """No connection to the server (refused, reset, name not found)."""


class MalformedReply(Exception):
    """The server's reply is not a chat completion."""


@dataclass
class Reply:
    """What a completion call returns."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


class Transport(Protocol):
    """Sends one chat-completion payload."""

    async def send(self, payload: dict[str, Any]) -> Reply:
        """The server's reply to `payload` (a chat-completions request body)."""

    async def status(self, url: str) -> int:
        """The HTTP status of an authorized GET (used to check the server before a run)."""

    async def close(self) -> None:
        """Release connections."""


def _reply(body: Any) -> Reply:
    try:
        choice = body["choices"][0]
        content = choice["message"].get("content") or ""
        usage = body.get("usage") or {}
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise MalformedReply(f"not a chat completion ({exc})") from None
    return Reply(
        text=content if isinstance(content, str) else json.dumps(content),
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
    )


class DirectTransport:
    """Chat completions over gramagents' own keep-alive HTTP/1.1 client."""

    def __init__(self, base_url: str, api_key: str, timeout: float, connections: int) -> None:
        from .http1 import Http1Client

        self.timeout = timeout
        self.http = Http1Client(
            base_url, headers={"Authorization": f"Bearer {api_key}"}, limit=connections
        )
        self.base_url = base_url.rstrip("/")

    async def send(self, payload: dict[str, Any]) -> Reply:
        """POST the payload; map failures to the transport's exceptions."""
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        response = await self._request("POST", "/chat/completions", data)
        if response.status >= 400:
            raise ApiError(response.status, _error_message(response.body), response.headers)
        try:
            return _reply(json.loads(response.body))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise MalformedReply(f"invalid JSON ({exc})") from None

    async def status(self, url: str) -> int:
        """The HTTP status of a GET (the connection stays in the pool for the run)."""
        if not url.startswith(self.base_url):
            raise ValueError(f"{url} is not on {self.base_url}")
        return (await self._request("GET", url[len(self.base_url) :])).status

    async def _request(self, method: str, path: str, body: bytes | None = None) -> Any:
        from .http1 import BadResponse, ConnectionFailed

        try:
            async with asyncio.timeout(self.timeout):
                return await self.http.request(method, path, body, "application/json")
        except ConnectionFailed as exc:
            raise Unreachable(str(exc)) from exc
        except BadResponse as exc:
            raise MalformedReply(str(exc)) from exc

    async def close(self) -> None:
        """Close the connections."""
        await self.http.close()


def _error_message(raw: bytes) -> str:
    try:
        body = json.loads(raw)
        error = body.get("error", body) if isinstance(body, dict) else body
        message = error.get("message") if isinstance(error, dict) else str(error)
        return str(message or "error")[:300]
    except (json.JSONDecodeError, AttributeError):
        return raw[:300].decode("utf-8", "replace") or "error"


class LangchainTransport:
    """Chat completions through langchain-openai's ChatOpenAI."""

    def __init__(
        self, base_url: str, api_key: str, timeout: float, connections: int, model: str
    ) -> None:
        import httpx
        from httpx_aiohttp import HttpxAiohttpClient
        from langchain_openai import ChatOpenAI

        self.http = HttpxAiohttpClient(
            timeout=timeout,
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )
        self.auth = {"Authorization": f"Bearer {api_key}"}
        self.client = ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=SecretStr(api_key),
            max_retries=0,
            timeout=timeout,
            http_async_client=self.http,
        )

    async def send(self, payload: dict[str, Any]) -> Reply:
        """Invoke the chat model; map the openai SDK's exceptions."""
        import openai

        options = {k: v for k, v in payload.items() if k not in ("model", "messages")}
        try:
            message = await self.client.ainvoke(payload["messages"], **options)
        except openai.APIStatusError as exc:
            headers = dict(exc.response.headers) if exc.response is not None else {}
            raise ApiError(exc.status_code, str(getattr(exc, "message", exc)), headers) from exc
        except openai.APITimeoutError as exc:
            raise asyncio.TimeoutError(str(exc)) from exc
        except openai.APIConnectionError as exc:
            raise Unreachable(str(exc)) from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise MalformedReply(str(exc)) from exc
        metadata = getattr(message, "response_metadata", {}) or {}
        usage = metadata.get("token_usage") or {}
        content = message.content
        return Reply(
            text=content if isinstance(content, str) else json.dumps(content),
            finish_reason=metadata.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )

    async def status(self, url: str) -> int:
        """The HTTP status of a GET through the same HTTP client as the completions."""
        import httpx

        try:
            return (await self.http.get(url, headers=self.auth)).status_code
        except httpx.TransportError as exc:
            raise Unreachable(str(exc) or type(exc).__name__) from exc

    async def close(self) -> None:
        """Close the HTTP client."""
        await self.http.aclose()
