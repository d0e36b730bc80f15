"""OpenAI-compatible servers (vLLM, SGLang, Ollama, llama.cpp, `transformers serve`, OpenAI).

Requests are asynchronous, at most `--concurrency` in flight, sent by a transport
(models/openai_transports.py: the openai SDK's `AsyncOpenAI`, or langchain-openai on it with
`client=langchain`). Retries are ours, not the SDK's (runtime/retry.py): rate limits are
treated apart from server errors and timeouts, `Retry-After` is honoured, the backoff is capped
and each request stops at a total deadline. A server that cannot be reached
at all, or that refuses the key, stops the run with one clear line; other failures are
recorded per request.

Minimal pairs are scored over `/v1/completions` with echo and log-probabilities
(models/openai_loglik.py), with the same transport, concurrency bound and retries as chat; a
server that gives no prompt log-probabilities stops the run with one line naming the spec.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from ..errors import BackendUnavailable, GramagentsError, NoLoglikelihood, SpecError
from ..records import ChatRequest, Generation, Loglikelihood, LoglikelihoodRequest
from ..redact import redact
from ..runtime.retry import ErrorKind, call_with_retries
from .base import Backend, BackendSettings
from .conditioning import scoring_text
from .openai_loglik import NoPromptLogprobs, completions_body, prompt_text, score_reply
from .openai_transports import (
    HTTP_CLIENTS,
    ApiError,
    LangchainTransport,
    MalformedReply,
    SdkTransport,
    TooLarge,
    TransportSettings,
    Unreachable,
)
from .spec import ModelSpec

OPTIONS = {
    "timeout",
    "structured",
    "api_key_env",
    "client",
    "http",
    "echo_max_tokens",
    "prefix",
    "max_reply_bytes",
}
MAX_REPLY_BYTES = 1 << 20
"""The most bytes read of one reply by default: 1 MiB, some thirty times a chat answer of
4,096 tokens and room for the echoed log-probabilities of a 10,000-token prompt, while
`--concurrency` replies at the cap stay within tens of megabytes and reading one such answer
takes seconds at most."""
_BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
CLIENTS = ("openai", "langchain")
OPENAI_URL = "https://api.openai.com/v1"
T = TypeVar("T")


def reply_cap(spec: ModelSpec) -> int:
    """The spec's `max_reply_bytes` (a number of bytes, or with K, M or G: 512K, 16M)."""
    raw = spec.option("max_reply_bytes")
    if raw is None:
        return MAX_REPLY_BYTES
    text = raw.strip().upper().removesuffix("B")
    number, unit = (text[:-1], text[-1]) if text[-1:] in _BYTE_UNITS else (text, "")
    if not number.isdigit() or int(number) * _BYTE_UNITS[unit] < 1024:
        raise SpecError(
            spec.raw, f"max_reply_bytes must be 1K or more (65536, 512K, 16M), not '{raw}'"
        )
    return int(number) * _BYTE_UNITS[unit]


def classify(exc: BaseException) -> ErrorKind:
    """How a transport error is handled."""
    if isinstance(exc, ApiError):
        if exc.status == 429:
            return ErrorKind.RATE_LIMIT
        if exc.status in (401, 403):
            return ErrorKind.FATAL
        if exc.status in (408, 409) or exc.status >= 500:
            return ErrorKind.TRANSIENT
        return ErrorKind.PERMANENT
    if isinstance(exc, (Unreachable, MalformedReply, asyncio.TimeoutError, TimeoutError)):
        return ErrorKind.TRANSIENT
    return ErrorKind.PERMANENT  # a reply too large among them: it would be as large again


def retry_after(exc: BaseException) -> float | None:
    """Seconds a 429 response asks us to wait (`retry-after-ms` or `Retry-After`), if any."""
    headers = getattr(exc, "headers", None)
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _describe(exc: BaseException) -> str:
    """One line saying what went wrong, without any credential the client's text shows."""
    if isinstance(exc, (ApiError, TooLarge)):
        return redact(str(exc))
    text = str(exc).strip().splitlines()
    return redact(f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__)


class OpenAIBackend(Backend):
    """A chat model behind an OpenAI-compatible HTTP API."""

    name = "openai"
    supports_loglikelihood = True
    answers_one_by_one = True

    def __init__(self, spec: ModelSpec, settings: BackendSettings) -> None:
        super().__init__(spec, settings)
        spec.reject_unknown_options(OPTIONS)
        if not spec.target:
            raise SpecError(spec.raw, "openai: needs a model name, e.g. openai:gpt-4o-mini")
        self.model_name = spec.target
        self.base_url = spec.base_url or OPENAI_URL
        self._url = redact(self.base_url)
        """The base URL as messages show it (credentials masked)."""
        timeout = spec.option("timeout")
        try:
            self.timeout = float(timeout) if timeout else settings.request_timeout
        except ValueError:
            raise SpecError(
                spec.raw, f"timeout must be a number of seconds, not '{timeout}'"
            ) from None
        mode = spec.choice("structured", ("json", "md_json", "tools"))
        self.structured_mode = mode  # type: ignore[assignment]
        self.client = spec.choice("client", CLIENTS)
        self.http = spec.choice("http", HTTP_CLIENTS)
        key_env = spec.option("api_key_env", "OPENAI_API_KEY") or "OPENAI_API_KEY"
        key = os.environ.get(key_env)
        if spec.base_url is None and not key:
            raise GramagentsError(
                f"--model '{spec.label}': the OpenAI API needs {key_env} set "
                "(or give a server: openai:MODEL@http://HOST:PORT/v1)"
            )
        self._api_key = key or "EMPTY"
        self.max_reply_bytes = reply_cap(spec)
        self.echo_max_tokens = int(spec.choice("echo_max_tokens", ("0", "1"), "1"))
        """`max_tokens` of a scoring request (new tokens after the echoed prompt, ignored)."""
        self.prefix = spec.option("prefix", "") or ""
        self._per_loop: dict[
            int, tuple[asyncio.AbstractEventLoop, SdkTransport, asyncio.Semaphore]
        ] = {}

    def identity(self) -> dict[str, Any]:
        """Backend, model name and base URL."""
        identity = {"backend": "openai", "model": self.model_name, "base_url": self.base_url}
        if self.prefix:  # what stands before a sentence scored alone changes its score
            identity["prefix"] = self.prefix
        return identity

    @property
    def chunk_size(self) -> int:
        """Enough items per unit of work to keep every connection busy."""
        return max(16, self.settings.concurrency)

    def _resources(self) -> tuple[SdkTransport, asyncio.Semaphore]:
        """The transport and the in-flight bound for the running event loop."""
        loop = asyncio.get_running_loop()
        entry = self._per_loop.get(id(loop))
        if entry is None or entry[0] is not loop:
            limit = max(1, self.settings.concurrency)
            settings = TransportSettings(self.timeout, limit, self.http, self.max_reply_bytes)
            transport: SdkTransport
            if self.client == "langchain":
                transport = LangchainTransport(
                    self.base_url, self._api_key, settings, self.model_name
                )
            else:
                transport = SdkTransport(self.base_url, self._api_key, settings)
            entry = (loop, transport, asyncio.Semaphore(limit))
            self._per_loop[id(loop)] = entry
        return entry[1], entry[2]

    async def check(self) -> None:
        """GET /models, retrying connection errors; unreachable or refused keys stop here."""
        policy = self.settings.retry.model_copy(
            update={
                "max_attempts": min(3, self.settings.retry.max_attempts),
                "deadline": min(60.0, self.settings.retry.deadline),
            }
        )
        wait = min(self.timeout, 10.0)

        async def probe() -> int:
            transport, _ = self._resources()  # the run's own connections, warmed by the check
            try:
                return await asyncio.wait_for(transport.status("/models"), wait)
            except asyncio.TimeoutError:
                raise Unreachable(f"no answer within {wait:g} s") from None

        try:
            status = await call_with_retries(probe, policy, classify, retry_after)
        except Unreachable as exc:
            raise BackendUnavailable(
                f"--model '{self.spec.label}': cannot reach {self._url} after "
                f"{policy.max_attempts} attempts ({exc})"
            ) from None
        if status in (401, 403):
            raise BackendUnavailable(
                f"--model '{self.spec.label}': {self._url} refused the API key (HTTP {status})"
            )

    async def _within_deadline(self, call: Awaitable[T]) -> T:
        """`call`, given `timeout` seconds in all: connection, headers and the whole body.

        The client's own timeout bounds each wait for bytes, so a server that sends its body
        a byte at a time would never trip it; this bounds the attempt.
        """
        try:
            return await asyncio.wait_for(call, self.timeout)
        except asyncio.TimeoutError:
            raise asyncio.TimeoutError(
                f"no whole reply within {self.timeout:g} s (the spec's timeout)"
            ) from None

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions request body."""
        params = request.params
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": params.temperature,
            "top_p": params.top_p,
            # the OpenAI API itself wants the newer name; other servers know `max_tokens`
            "max_completion_tokens"
            if self.base_url == OPENAI_URL
            else "max_tokens": params.max_tokens,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        if request.structured_mode == "json":
            body["response_format"] = {"type": "json_object"}
        return body

    async def complete(self, requests: list[ChatRequest]) -> list[Generation]:
        """Answer requests concurrently, at most `concurrency` in flight."""
        return list(await asyncio.gather(*(self._complete_one(r) for r in requests)))

    async def _complete_one(self, request: ChatRequest) -> Generation:
        transport, semaphore = self._resources()
        body = self.payload(request)

        async def attempt() -> Any:
            self.stats.requests_sent += 1
            return await self._within_deadline(transport.send(body))

        async with semaphore:
            started = time.perf_counter()
            try:
                reply = await call_with_retries(attempt, self.settings.retry, classify, retry_after)
            except Exception as exc:  # noqa: BLE001 - sorted below
                if classify(exc) is ErrorKind.FATAL:
                    raise BackendUnavailable(
                        f"--model '{self.spec.label}': {_describe(exc)}"
                    ) from None
                if isinstance(exc, Unreachable):
                    raise BackendUnavailable(
                        f"--model '{self.spec.label}': lost the connection to {self._url} "
                        f"({_describe(exc)}); re-run the same command to resume"
                    ) from None
                return Generation(error=_describe(exc), latency_s=time.perf_counter() - started)
        return Generation(
            text=reply.text,
            finish_reason=reply.finish_reason,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=time.perf_counter() - started,
        )

    # -- log-likelihood -----------------------------------------------------------------------

    async def loglikelihood(self, requests: list[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Score continuations over `/v1/completions`, at most `concurrency` in flight."""
        return list(await asyncio.gather(*(self._score_one(r) for r in requests)))

    async def check_loglikelihood(self) -> None:
        """Score one sentence as a BLiMP pair is scored: a server that cannot stops here."""
        probe = LoglikelihoodRequest(
            context="", continuation="The cat sleeps.", conditioning="spaced"
        )
        await self._score_one(probe)

    async def _score_one(self, request: LoglikelihoodRequest) -> Loglikelihood:
        transport, semaphore = self._resources()
        text = scoring_text(request)
        prompt = prompt_text(text, self.prefix)
        max_tokens = self.echo_max_tokens
        body = completions_body(self.model_name, prompt, max_tokens)

        async def attempt() -> Any:
            self.stats.requests_sent += 1
            return await self._within_deadline(transport.post("/completions", body))

        async with semaphore:
            try:
                reply = await call_with_retries(attempt, self.settings.retry, classify, retry_after)
                return score_reply(reply, len(text.continuation), max_tokens)
            except NoPromptLogprobs as exc:
                raise self._no_logprobs(str(exc)) from None
            except Exception as exc:  # noqa: BLE001 - sorted below
                kind = classify(exc)
                if isinstance(exc, ApiError) and kind is ErrorKind.PERMANENT:
                    raise self._no_logprobs(_describe(exc)) from None
                self.stats.failed += 1
                if kind is ErrorKind.FATAL:
                    raise BackendUnavailable(
                        f"--model '{self.spec.label}': {_describe(exc)}"
                    ) from None
                raise BackendUnavailable(
                    f"--model '{self.spec.label}': scoring a sentence on {self._url} failed "
                    f"({_describe(exc)}); re-run the same command to resume"
                ) from None

    def _no_logprobs(self, reason: str) -> NoLoglikelihood:
        return NoLoglikelihood(
            f"--model '{self.spec.label}': {self._url}/completions gives no log-probabilities "
            f"of the prompt ({reason}); minimal pairs need a server that answers echo with "
            "logprobs (vLLM, SGLang), or ask them as a forced choice with --pairs choice"
        )

    async def aclose(self) -> None:
        """Close the connections of the current event loop."""
        loop = asyncio.get_running_loop()
        entry = self._per_loop.pop(id(loop), None)
        if entry is not None:
            await entry[1].close()
