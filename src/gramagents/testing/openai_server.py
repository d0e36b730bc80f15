"""A small OpenAI-compatible chat server on 127.0.0.1, for tests and benchmarks.

It speaks enough of the chat-completions protocol for any OpenAI client (`GET /v1/models`,
`POST /v1/chat/completions`; `GET /stats` tells what it received), answers with a Python
function after an optional fixed delay, holds many connections at once, and counts every chat
request it receives, by what it did with it (`counts`: `answered` or the fault's kind).

Faults come two ways: `inject` queues faults for the next requests (HTTP 429 with
`Retry-After`, 500, 503, 401, a slow answer, a connection reset or closed, a truncated body,
malformed JSON, output that fails the response schema, a body that drips a byte at a time, an
answer of 20 MB), and a `FaultPlan` (testing/faults.py) fails a seeded fraction of all
requests with kinds drawn from those. `drip_s` and `reply_bytes` make every answer drip, or
every answer that large. `basic_auth` makes it require credentials. With an `ssl_context` it
speaks HTTPS. It listens on 127.0.0.1 only.

Given a `scorer` (testing/prompt_scorer.py, e.g. `ModelScorer.embedded()`), it also answers
`POST /v1/completions` as vLLM does, echo and log-probabilities of the prompt's tokens
included, with that model's real numbers; without one that endpoint answers 404, as a
chat-only server does. `prompt_logprobs=False` makes it answer like a server that ignores
`echo` for log-probabilities (`logprobs: null`).

    with FakeChatServer(responder=lambda body: "T", delay=0.1) as server:
        spec = f"openai:fake@{server.base_url}"

`echo_prompt` and `always(text)` are responders for a model that only ever echoes its prompt,
or only ever gives one reply (a refusal, a hedge): a benchmark must give such a model nothing.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import MissingDependency
from .fault_replies import drip, drop, error_response, oversized, truncated
from .faults import INVALID_OUTPUT, PLAN_KINDS, Fault, FaultPlan, body_digest, wants_structured

__all__ = [
    "FakeChatServer",
    "Fault",
    "FaultPlan",
    "PLAN_KINDS",
    "always",
    "echo_prompt",
    "last_user_text",
]

Responder = Callable[[dict[str, Any]], str]


def last_user_text(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request body."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def echo_prompt(body: dict[str, Any]) -> str:
    """A responder that gives the prompt back: the last user message, word for word."""
    return last_user_text(body)


def always(text: str) -> Responder:
    """A responder that gives the same reply to every request."""
    return lambda body: text


@dataclass
class FakeChatServer:
    """The server; use as a context manager (it runs in a background thread)."""

    responder: Responder = field(default=lambda body: "T")
    delay: float = 0.0
    model: str = "fake"
    api_key: str | None = None
    """When set, `GET /v1/models` answers 401 to any other bearer key."""
    basic_auth: tuple[str, str] | None = None
    """(user, password): when set, every request without them as basic auth answers 401."""
    authorizations: Counter[str] = field(default_factory=Counter)
    """`Authorization` headers received, by value."""
    faults: deque[Fault] = field(default_factory=deque)
    plan: FaultPlan | None = None
    """Fails a seeded fraction of the requests that no injected fault is queued for."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    """Chat requests received, by outcome: `answered`, or the kind of fault they met."""
    seen: Counter[str] = field(default_factory=Counter)
    """Chat requests received, by the digest of their body (`faults.body_digest`)."""
    max_in_flight: int = 0
    port: int = 0
    ssl_context: ssl.SSLContext | None = None
    """When set, the server speaks HTTPS with this context (its certificate and key)."""
    scorer: Any = None
    """A `ModelScorer` that answers `/v1/completions`; none: that endpoint answers 404."""
    prompt_logprobs: bool = True
    """False: completions come back with `logprobs: null`, as from a server without echo."""
    drip_s: float = 0.0
    """Above 0: every chat answer's body is sent one byte at a time, this many seconds apart."""
    reply_bytes: int = 0
    """Above 0: every chat answer is a completion this many bytes long (its content padded),
    sent in chunks without a Content-Length."""
    completion_bodies: list[dict[str, Any]] = field(default_factory=list)
    """Bodies of the completions requests received so far."""
    _in_flight: int = 0
    _thread: threading.Thread | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """The `/v1` URL clients are given."""
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def reset(self, plan: FaultPlan | None = None) -> None:
        """Forget what was received and put `plan` in force (the port stays the same)."""
        with self._lock:
            self.requests.clear()
            self.counts.clear()
            self.seen.clear()
            self.faults.clear()
            self.completion_bodies.clear()
            self.authorizations.clear()
            self.max_in_flight = 0
            self.plan = plan

    def inject(self, *faults: Fault) -> None:
        """Apply these faults, in order, to the next requests."""
        with self._lock:
            self.faults.extend(faults)

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests received so far."""
        with self._lock:
            return list(self.requests)

    def stats(self) -> dict[str, Any]:
        """Chat requests received, the most in flight at once, and the counts by outcome."""
        with self._lock:
            return {
                "chat_requests": len(self.requests),
                "max_in_flight": self.max_in_flight,
                "counts": dict(self.counts),
            }

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> FakeChatServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start serving in a background thread; returns once the port is bound."""
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            raise MissingDependency("aiohttp", "the test chat server") from None
        self._thread = threading.Thread(target=self._serve, name="fake-chat-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the fake chat server did not start")

    def stop(self) -> None:
        """Stop serving."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def _serve(self) -> None:
        from aiohttp import web

        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application(middlewares=[self._authorize])
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_get("/stats", self._stats)
        runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(
            runner, "127.0.0.1", self.port, backlog=1024, ssl_context=self.ssl_context
        )
        loop.run_until_complete(site.start())
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    # -- handlers ----------------------------------------------------------------------------

    @property
    def _authorize(self) -> Any:
        """Middleware: count the `Authorization` header; refuse it if not `basic_auth`'s."""
        from aiohttp import BasicAuth, web

        @web.middleware
        async def authorize(request: Any, handler: Any) -> Any:
            header = request.headers.get("Authorization", "")
            with self._lock:
                self.authorizations[header] += 1
            if self.basic_auth is not None and header != BasicAuth(*self.basic_auth).encode():
                return web.json_response(
                    {"error": {"message": "invalid credentials", "type": "auth"}}, status=401
                )
            return await handler(request)

        return authorize

    async def _models(self, request: Any) -> Any:
        from aiohttp import web

        if self.api_key is not None and request.headers.get("Authorization") != (
            f"Bearer {self.api_key}"
        ):
            return web.json_response(
                {"error": {"message": "invalid key", "type": "auth"}}, status=401
            )
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": self.model, "object": "model", "created": 0, "owned_by": "gramagents"}
                ],
            }
        )

    async def _stats(self, request: Any) -> Any:
        """What the server received (not in the protocol: for benchmarks in another process)."""
        from aiohttp import web

        return web.json_response(self.stats())

    async def _chat(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        digest = body_digest(body) if self.plan is not None else ""
        with self._lock:
            self.requests.append(body)
            fault = self.faults.popleft() if self.faults else None
            if fault is None and self.plan is not None:
                fault = self.plan.choose(digest, self.seen[digest], wants_structured(body))
            self.seen[digest] += 1
            self.counts[fault.kind if fault is not None else "answered"] += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if fault is not None:
                return await self._fault(fault, request, body)
            text = self.responder(body)
            if self.reply_bytes:
                return await oversized(
                    request, _completion(body, text, self.model), self.reply_bytes
                )
            if self.drip_s:
                return await drip(request, _completion(body, text, self.model), self.drip_s)
            return web.json_response(_completion(body, text, self.model))
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _completions(self, request: Any) -> Any:
        from aiohttp import web

        body = await request.json()
        with self._lock:
            self.completion_bodies.append(body)
        if self.scorer is None:
            return web.json_response(
                {"error": {"message": "Not Found", "type": "not_found"}}, status=404
            )
        prompts = body.get("prompt", "")
        prompts = prompts if isinstance(prompts, list) else [prompts]
        loop = asyncio.get_running_loop()
        choices = []
        used = generated = 0
        for index, prompt in enumerate(prompts):
            choice, counts = await loop.run_in_executor(
                None, _completion_choice, self.scorer, body, str(prompt), self.prompt_logprobs
            )
            choices.append({**choice, "index": index})
            used, generated = used + counts[0], generated + counts[1]
        return web.json_response(
            {
                "id": f"cmpl-{time.monotonic_ns()}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": body.get("model", self.model),
                "choices": choices,
                "usage": {
                    "prompt_tokens": used,
                    "completion_tokens": generated,
                    "total_tokens": used + generated,
                },
            }
        )

    async def _fault(self, fault: Fault, request: Any, body: dict[str, Any]) -> Any:
        from aiohttp import web

        kind = fault.kind
        if kind in ("429", "401", "500", "503"):
            return error_response(kind, fault.retry_after)
        if kind in ("slow", "timeout"):
            await asyncio.sleep(fault.hang_s)
            return web.json_response({"error": {"message": "too late"}}, status=504)
        if kind == "malformed":
            return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
        if kind == "invalid":
            return web.json_response(_completion(body, INVALID_OUTPUT, self.model))
        if kind == "truncated":
            return await truncated(request, _completion(body, self.responder(body), self.model))
        if kind == "drip":
            return await drip(
                request, _completion(body, self.responder(body), self.model), fault.drip_s
            )
        if kind == "oversized":
            return await oversized(
                request, _completion(body, self.responder(body), self.model), fault.size
            )
        if kind in ("reset", "disconnect"):
            drop(request, reset=kind == "reset")
            return web.Response(status=500)
        raise ValueError(f"unknown fault {kind}")


def _completion(body: dict[str, Any], text: str, model: str) -> dict[str, Any]:
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", model),
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_tokens + len(text.split()),
        },
    }


def _completion_choice(
    scorer: Any, body: dict[str, Any], prompt: str, prompt_logprobs: bool
) -> tuple[dict[str, Any], tuple[int, int]]:
    """One completions choice: echo, `logprobs` and `max_tokens` as the request asks."""
    max_tokens = body.get("max_tokens")
    max_tokens = 16 if max_tokens is None else int(max_tokens)
    top, echo = body.get("logprobs"), bool(body.get("echo"))
    tokens, count = scorer.complete(prompt, max_tokens, int(top or 0))
    listed = tokens if echo else tokens[count:]
    generated = "".join(t.text for t in tokens[count:])
    logprobs = None
    if top is not None and (prompt_logprobs or not echo):
        offsets, at = [], 0 if echo else len(prompt)
        for token in listed:
            offsets.append(at)
            at += len(token.text)
        logprobs = {
            "tokens": [t.text for t in listed],
            "token_logprobs": [t.logprob for t in listed],
            "top_logprobs": [t.top for t in listed],
            "text_offset": offsets,
        }
    choice = {
        "text": (prompt if echo else "") + generated,
        "logprobs": logprobs,
        "finish_reason": "length",
    }
    return choice, (count, len(tokens) - count)


def main() -> None:
    """Serve from the command line (for benchmarks that need the server in its own process).

    `python -m gramagents.testing.openai_server --port 8765 --delay 0.1` answers every request
    with `T` after the delay, until interrupted; it prints the base URL once it listens.
    `--fault-rate 0.2 --seed 7` fails a seeded fifth of the requests (`--fault-kinds` limits
    the kinds; `--hang` is how long a slow answer takes).
    """
    import argparse

    parser = argparse.ArgumentParser(description="A local OpenAI-compatible chat server.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--answer", default="T")
    parser.add_argument(
        "--embedded", action="store_true", help="answer /v1/completions with SmolLM2 (float32)"
    )
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-kinds", default=",".join(PLAN_KINDS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang", type=float, default=2.0)
    parser.add_argument("--retry-after", type=float, default=0.1)
    parser.add_argument("--drip", type=float, default=0.0, help="seconds between body bytes")
    parser.add_argument("--reply-bytes", type=int, default=0, help="pad every answer to N bytes")
    args = parser.parse_args()
    answer = args.answer
    plan = None
    if args.fault_rate > 0:
        plan = FaultPlan(
            rate=args.fault_rate,
            kinds=tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip()),
            seed=args.seed,
            retry_after=args.retry_after,
            hang_s=args.hang,
        )
    server = FakeChatServer(
        responder=lambda body: answer,
        delay=args.delay,
        port=args.port,
        plan=plan,
        drip_s=args.drip,
        reply_bytes=args.reply_bytes,
    )
    if args.embedded:
        from .prompt_scorer import ModelScorer

        server.scorer = ModelScorer.embedded()
    server.start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
