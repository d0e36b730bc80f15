"""How requests reach an OpenAI-compatible server: the openai SDK, or langchain-openai on it.

- `client=openai` (the default): the openai SDK's `AsyncOpenAI`. Chat requests go through its
  `post` (the SDK's documented way to reach any endpoint), which returns the raw response, so
  that a server's extra fields survive and no pydantic model is built per answer.
- `client=langchain`: langchain-openai's `ChatOpenAI` for the chat requests, for users who want
  that stack's behaviour; checks (and anything not a chat request) use the same SDK client.

Both run on one HTTP client per event loop, chosen by `http=`: `aiohttp` (the default, the SDK's
`DefaultAioHttpClient`; at tens of requests in flight it spends about half the CPU time per
request of the SDK's plain httpx transport, see bench/api.py) or `httpx`
(`DefaultAsyncHttpxClient`). Either honours `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/`NO_PROXY`
and `SSL_CERT_FILE`/`SSL_CERT_DIR` from the environment and follows redirects.

The SDK's own retries are off (`max_retries=0`): the backend's policy (runtime/retry.py)
decides, and each attempt is counted once. Failures come out as `ApiError` (an HTTP error
status, with its headers for `Retry-After`), `Unreachable` (no connection could be made or it
dropped before an answer), `asyncio.TimeoutError`, `MalformedReply` (not JSON, not a chat
completion, or a body cut off before its announced length) or `TooLarge` (a reply over the
bytes a request may read: a response hook counts them as they arrive, so no more is held).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

HTTP_CLIENTS = ("aiohttp", "httpx")


class ApiError(Exception):
    """The server answered with an error status."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        self.status = status
        self.message = message
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        super().__init__(f"HTTP {status}: {message}")


class Unreachable(Exception):
    """No connection to the server (refused, reset, name not found, certificate refused)."""


class MalformedReply(Exception):
    """The server's reply is not what the protocol says."""


class TooLarge(Exception):
    """A reply longer than the bytes a request may read (`max_reply_bytes`); not retried."""

    def __init__(self, status: int, limit: int, announced: int | None = None) -> None:
        self.status = status
        self.limit = limit
        said = f" (it announced {announced})" if announced is not None else ""
        super().__init__(f"too-large: the reply is over {limit} bytes{said}")


@dataclass(frozen=True)
class TransportSettings:
    """How a transport's HTTP client connects and reads."""

    timeout: float
    """Seconds the client waits for a connection or the next bytes (the backend bounds each
    whole attempt with the same number)."""
    connections: int
    http: str = "aiohttp"
    max_bytes: int = 1 << 20
    """The most bytes read of one reply."""


@dataclass
class Reply:
    """What a chat-completion call returns."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


def chat_reply(body: Any) -> Reply:
    """The first choice of a chat-completion body."""
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


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the exceptions it was raised from, outermost first."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


def _root_message(exc: BaseException) -> str:
    """The most specific message in an exception's chain (the SDK's own says little)."""
    messages = [str(e).strip() for e in _chain(exc)]
    message = next((m for m in reversed(messages) if m), type(exc).__name__)
    return message.splitlines()[0]


def _timed_out(exc: BaseException) -> bool:
    """Whether an SDK timeout error stands for a timeout.

    The aiohttp adapter reports every refused, failed or dropped connection as a connect
    timeout; an unreachable server must not pass for a slow one.
    """
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is None:
        return True
    return not any(
        isinstance(e, aiohttp.ClientConnectionError) and not isinstance(e, TimeoutError)
        for e in _chain(exc)
    )


def _cut_off(exc: BaseException) -> bool:
    """Whether a connection error is a reply that stopped before the length it announced."""
    aiohttp = sys.modules.get("aiohttp")
    for cause in _chain(exc):
        if aiohttp is not None and isinstance(cause, aiohttp.ClientPayloadError):
            return True
        if type(cause).__name__ == "RemoteProtocolError" and "complete message body" in str(cause):
            return True  # httpx (h11): "peer closed connection without sending complete ..."
    return False


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)[:300]
    return str(getattr(exc, "message", exc))[:300]


@contextmanager
def sdk_errors() -> Iterator[None]:
    """Map the openai SDK's exceptions to the transport's."""
    import openai

    try:
        yield
    except TooLarge:
        raise
    except openai.APIStatusError as exc:
        raise ApiError(exc.status_code, _error_message(exc), dict(exc.response.headers)) from exc
    except openai.APITimeoutError as exc:
        if _timed_out(exc):
            raise asyncio.TimeoutError(_root_message(exc)) from exc
        raise Unreachable(_root_message(exc)) from exc
    except openai.APIConnectionError as exc:
        too_large = next((e for e in _chain(exc) if isinstance(e, TooLarge)), None)
        if too_large is not None:
            raise too_large from None
        if _cut_off(exc):
            raise MalformedReply("the reply stopped before the length it announced") from exc
        raise Unreachable(_root_message(exc)) from exc
    except (openai.APIResponseValidationError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedReply(f"invalid JSON ({exc})") from exc


def _capped(limit: int) -> Any:
    """A response hook that stops reading a reply at `limit` bytes (raising `TooLarge`).

    It runs once the headers are in, before the body is read: a reply that announces more is
    refused at once; any other reads through a stream that counts its bytes. Either way no
    more than `limit` bytes of a reply are ever held.
    """
    import httpx2

    class CappedStream(httpx2.AsyncByteStream):
        def __init__(self, stream: Any, status: int) -> None:
            self.stream, self.status = stream, status

        async def __aiter__(self) -> Any:
            read = 0
            async for chunk in self.stream:
                read += len(chunk)
                if read > limit:
                    raise TooLarge(self.status, limit)
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    async def cap(response: Any) -> None:
        announced = response.headers.get("content-length", "")
        if announced.isdigit() and int(announced) > limit:
            raise TooLarge(response.status_code, limit, int(announced))
        response.stream = CappedStream(response.stream, response.status_code)

    return cap


def http_client(kind: str, timeout: float, connections: int, max_bytes: int) -> Any:
    """The SDK's HTTP client of this kind, with room for `connections` at once.

    No reply it reads is longer than `max_bytes`.
    """
    import httpx2
    import openai

    limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
    factory = openai.DefaultAioHttpClient if kind == "aiohttp" else openai.DefaultAsyncHttpxClient
    return factory(timeout=timeout, limits=limits, event_hooks={"response": [_capped(max_bytes)]})


def url_credentials(url: str) -> tuple[str, dict[str, str]]:
    """The URL without its `user:password@`, and the header that carries them instead.

    HTTP clients disagree about credentials in a URL (httpx sends them as basic auth, aiohttp
    refuses them beside the SDK's own `Authorization` header): the URL is given to none of
    them with its userinfo, and the credentials travel as a basic-auth header (which takes the
    place of the bearer key) with every client alike.
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), {"Authorization": f"Basic {token}"}


class SdkTransport:
    """Requests through the openai SDK's `AsyncOpenAI`, without its retries."""

    def __init__(self, base_url: str, api_key: str, settings: TransportSettings) -> None:
        import openai

        url, self.headers = url_credentials(base_url)
        timeout = settings.timeout
        self.http = http_client(settings.http, timeout, settings.connections, settings.max_bytes)
        self.sdk = openai.AsyncOpenAI(
            base_url=url,
            api_key=api_key,
            max_retries=0,
            timeout=timeout,
            http_client=self.http,
            default_headers=self.headers or None,
        )

    async def post(self, path: str, payload: dict[str, Any]) -> Any:
        """POST `payload` to `path` (relative to the base URL); the parsed JSON reply."""
        import httpx2

        with sdk_errors():
            response = await self.sdk.post(path, body=payload, cast_to=httpx2.Response)
            return json.loads(response.content)

    async def send(self, payload: dict[str, Any]) -> Reply:
        """The server's reply to a chat-completions request body."""
        return chat_reply(await self.post("/chat/completions", payload))

    async def status(self, path: str) -> int:
        """The HTTP status of an authorized GET of `path` (checks the server before a run)."""
        import httpx2

        try:
            with sdk_errors():
                response = await self.sdk.get(path, cast_to=httpx2.Response)
        except (ApiError, TooLarge) as exc:  # the status is all a check reads
            return exc.status
        return response.status_code

    async def close(self) -> None:
        """Release connections."""
        await self.sdk.close()


class LangchainTransport(SdkTransport):
    """Chat requests through langchain-openai's `ChatOpenAI`, on the same HTTP client."""

    def __init__(
        self, base_url: str, api_key: str, settings: TransportSettings, model: str
    ) -> None:
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        super().__init__(base_url, api_key, settings)
        self.chat = ChatOpenAI(
            model=model,
            base_url=url_credentials(base_url)[0],
            api_key=SecretStr(api_key),
            max_retries=0,
            timeout=settings.timeout,
            http_async_client=self.http,
            default_headers=self.headers or None,
        )

    async def send(self, payload: dict[str, Any]) -> Reply:
        """Invoke the chat model with the payload's messages and decoding options."""
        options = {k: v for k, v in payload.items() if k not in ("model", "messages")}
        with sdk_errors():
            message = await self.chat.ainvoke(payload["messages"], **options)
        metadata = getattr(message, "response_metadata", {}) or {}
        usage = metadata.get("token_usage") or {}
        content = message.content
        return Reply(
            text=content if isinstance(content, str) else json.dumps(content),
            finish_reason=metadata.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
        )
