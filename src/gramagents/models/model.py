"""The model the workflow calls: a backend behind the cache, with structured output.

`Model` gives every backend the same three operations:

- `generate(requests)`: chat completions, served from the cache where possible;
- `loglikelihood(requests)`: log-probabilities of continuations (local backends);
- `structured(request, ResponseModel)`: a validated pydantic object through instructor.
  Validation errors are sent back to the model and re-asked a bounded number of times;
  transport errors were already retried inside the backend and are never pasted into the
  prompt; what still fails comes back as a `Structured` with `error` set.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ..records import (
    ChatRequest,
    Generation,
    GenParams,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
)
from ..runtime.answers import arrived
from ..runtime.cache import Cache, NullCache, canonical_json
from ..runtime.interrupt import (
    STOP,
    Interrupted,
    not_asked_generation,
    not_asked_likelihood,
)
from .base import Backend
from .spec import decoding_overrides

T = TypeVar("T", bound=BaseModel)


@dataclass
class Structured(Generic[T]):
    """The outcome of a structured call: a value, or the reason there is none."""

    value: T | None
    error: str | None = None
    attempts: int = 0
    raw: list[str] = field(default_factory=list)
    """Every completion the model gave, in order (re-asks included)."""
    unreachable: bool = False
    """The model could not be reached (after the transport's retries): asking again later may
    succeed, unlike output that stayed invalid."""
    interrupted: bool = False
    """Not asked to the end: the command was stopped first (runtime/interrupt.py)."""

    @property
    def ok(self) -> bool:
        """True when a validated value came back."""
        return self.value is not None


class TransportFailure(Exception):
    """A request that failed after the backend's retries (raised inside instructor's loop)."""

    def __init__(self, message: str, interrupted: bool = False) -> None:
        super().__init__(message)
        self.interrupted = interrupted
        """The request was not asked: the command was stopped first."""


class Model:
    """A backend with the response cache and counters in front of it."""

    def __init__(self, backend: Backend, cache: Cache | None = None) -> None:
        self.backend = backend
        self.cache: Cache = cache if cache is not None else NullCache()
        self.stats = backend.stats
        self._identity: dict[str, Any] | None = None
        self.decoding = decoding_overrides(backend.spec)
        """Decoding the spec sets (`?temperature=...`), replacing each request's own."""
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def params(self, params: GenParams) -> GenParams:
        """`params` with the spec's decoding options in place (the same object without any)."""
        return params.model_copy(update=self.decoding) if self.decoding else params

    @property
    def label(self) -> str:
        """The spec string records use for this model."""
        return self.backend.spec.label

    @property
    def identity(self) -> dict[str, Any]:
        """The backend's identity (computed once)."""
        if self._identity is None:
            self._identity = self.backend.identity()
        return self._identity

    def request_key(self, request: ChatRequest) -> str:
        """Cache key of a chat request for this model."""
        return self.chat_keys([request])[0]

    def _keys(self, kind: str, dumps: list[dict[str, Any]]) -> list[str]:
        # The canonical JSON of {"kind", "model", "request"} (keys in sorted order), with the
        # model's part serialised once rather than once per request.
        head = f'{{"kind":{canonical_json(kind)},"model":{canonical_json(self.identity)},"request":'
        return [hashlib.sha256(f"{head}{canonical_json(d)}}}".encode()).hexdigest() for d in dumps]

    def chat_keys(self, requests: list[ChatRequest]) -> list[str]:
        """Cache keys of chat requests for this model."""
        return self._keys("chat", [r.model_dump(mode="json") for r in requests])

    def likelihood_keys(self, requests: list[LoglikelihoodRequest]) -> list[str]:
        """Cache keys of scoring requests for this model."""
        return self._keys("loglikelihood", [r.model_dump(mode="json") for r in requests])

    def known(self, keys: list[str]) -> set[str]:
        """Those of `keys` the cache holds an answer for."""
        return self.cache.has_many(keys)

    async def generate(
        self, requests: list[ChatRequest], keys: list[str] | None = None
    ) -> list[Generation]:
        """Completions for `requests`, in order; errors come back as `Generation.error`.

        `keys` are the requests' cache keys when the caller computed them already. With the
        cache off (`--no-cache`) every request goes to the backend as it is.
        """
        if not self.cache.enabled:
            answers = await self._uncached(requests, self.backend.complete, not_asked_generation)
            self.stats.failed += sum(1 for g in answers if g.error and not g.interrupted)
            self.stats.count_tokens(answers)
            return answers
        keys = keys if keys is not None else self.chat_keys(requests)
        found = self.cache.get_many(keys)
        arrived(sum(1 for key in keys if key in found))
        todo: dict[str, ChatRequest] = {}
        for key, request in zip(keys, requests, strict=True):
            if key not in found and key not in todo:
                todo[key] = request
        fresh: dict[str, Generation] = {}
        if todo:
            fresh = await self._answer(todo)
            self.stats.failed += sum(1 for g in fresh.values() if g.error and not g.interrupted)
            self.stats.count_tokens(fresh.values())
        results: list[Generation] = []
        first: dict[str, Generation] = {}
        for key in keys:
            if key in fresh:
                result = fresh.pop(key)
            elif key in found:
                self.stats.cache_hits += 1
                result = Generation.model_validate({**found[key], "cached": True, "latency_s": 0.0})
            else:  # a duplicate of a request answered just above
                self.stats.shared += 1
                result = first[key]
            first.setdefault(key, result)
            results.append(result)
        return results

    async def _answer(self, todo: dict[str, ChatRequest]) -> dict[str, Generation]:
        """Ask the backend for `todo` (by cache key) and store the answers (never errors)."""
        return await self._ask(
            todo, self.backend.complete, lambda g: g.error is None, not_asked_generation
        )

    async def _uncached(
        self,
        requests: list[Any],
        call: Callable[[list[Any]], Awaitable[list[Any]]],
        not_asked: Callable[[], Any],
    ) -> list[Any]:
        """`call(requests)` without the cache; one by one when a stop may abandon them."""
        if not (STOP.armed and self.backend.answers_one_by_one):
            answers = await call(requests)
            self._arrived(len(answers))
            return answers
        answers = await self._ask(dict(enumerate(requests)), call, lambda _: False, not_asked)
        return list(answers.values())

    async def _ask(
        self,
        todo: dict[Any, Any],
        call: Callable[[list[Any]], Awaitable[list[Any]]],
        storable: Callable[[Any], bool],
        not_asked: Callable[[], Any],
    ) -> dict[Any, Any]:
        """Send `todo` (requests by cache key) through `call` and store what is `storable`.

        A backend that answers requests one by one has each answer stored as it arrives: a
        run killed while a slow request (retrying, say) is still out has kept the rest, and
        loses no more answers than it had requests in flight. A request a stop abandons
        (runtime/interrupt.py) comes back `not_asked()`; a batching backend gives those itself.
        """
        if not self.backend.answers_one_by_one or len(todo) == 1:
            pending = call(list(todo.values()))
            try:  # a batching backend stops by itself; a request out is abandoned
                answers = await (
                    STOP.unless_stopped(pending) if self.backend.answers_one_by_one else pending
                )
            except Interrupted:
                return {key: not_asked() for key in todo}
            self._arrived(len(answers))
            fresh = dict(zip(todo, answers, strict=True))
            kept = {k: a.model_dump(mode="json") for k, a in fresh.items() if storable(a)}
            self.cache.put_many(kept)
            return fresh

        slots = self._answer_slots()

        async def one(key: Any, request: Any) -> Any:
            async with slots:
                try:
                    [answer] = await STOP.unless_stopped(call([request]))
                except Interrupted:
                    return not_asked()
                self._arrived(1)
                if storable(answer):
                    self.cache.put_many({key: answer.model_dump(mode="json")})
            return answer

        answers = await asyncio.gather(*(one(k, r) for k, r in todo.items()))
        return dict(zip(todo, answers, strict=True))

    def _arrived(self, count: int) -> None:
        """Report answers the backend gave to the asker's progress, unless it reports them."""
        if not self.backend.counts_answers:
            arrived(count)

    def _answer_slots(self) -> asyncio.Semaphore:
        """The limit on requests out and answers not yet stored, shared by every call.

        Sending and storing under one limit, across the chunks the eval runs at once: no more
        answers than requests in flight can be lost to a kill (an answer waiting for its turn
        to be stored would be one more). One per event loop (a semaphore belongs to one).
        """
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:
            self._slots = (loop, asyncio.Semaphore(max(1, self.backend.settings.concurrency)))
        return self._slots[1]

    async def loglikelihood(
        self, requests: list[LoglikelihoodRequest], keys: list[str] | None = None
    ) -> list[Loglikelihood]:
        """Log-probabilities of continuations, cached like completions."""
        if not self.cache.enabled:
            return await self._uncached(requests, self.backend.loglikelihood, not_asked_likelihood)
        keys = keys if keys is not None else self.likelihood_keys(requests)
        found = self.cache.get_many(keys)
        arrived(sum(1 for key in keys if key in found))
        todo = {k: r for k, r in zip(keys, requests, strict=True) if k not in found}
        fresh: dict[str, Loglikelihood] = {}
        if todo:
            fresh = await self._ask(
                todo, self.backend.loglikelihood, lambda s: not s.interrupted, not_asked_likelihood
            )
        results = []
        answered: set[str] = set()
        for key in keys:
            if key in fresh:
                if key in answered:  # a duplicate of a request scored once
                    self.stats.shared += 1
                answered.add(key)
                results.append(fresh[key])
            else:
                self.stats.cache_hits += 1
                results.append(Loglikelihood.model_validate({**found[key], "cached": True}))
        return results

    async def structured(
        self,
        request: ChatRequest | list[Message],
        response_model: type[T],
        *,
        context: dict[str, Any] | None = None,
        max_reasks: int = 2,
        screen: Callable[[str], str] | None = None,
    ) -> Structured[T]:
        """A validated `response_model`, re-asking on validation errors up to `max_reasks`.

        Args:
            request: The first messages with what else keys the answer: decoding, prompt and
                rubric hashes, sample index (a bare message list: the defaults). Its response
                schema and structured-output mode are set here, from `response_model` and the
                backend; each re-ask sends instructor's messages with the same rest.
            response_model: The pydantic model the reply must validate against.
            context: Validation context handed to the model's validators.
            max_reasks: Re-asks after a reply that does not validate.
            screen: What of each reply is read (a judge's reply without the graded text it
                repeats, judging/fence.py); `Structured.raw` keeps the replies whole.
        """
        import instructor
        from instructor.core.exceptions import InstructorRetryException

        first = request if isinstance(request, ChatRequest) else ChatRequest(messages=request)
        params = self.params(first.params)
        mode = self.backend.structured_mode
        schema = response_model.model_json_schema()
        raw: list[str] = []

        async def create(messages: list[dict[str, Any]], **_: Any) -> Any:
            attempt = ChatRequest(
                messages=[Message(role=m["role"], content=m["content"]) for m in messages],
                params=params,
                prompt_hash=first.prompt_hash,
                rubric_hash=first.rubric_hash,
                response_schema=schema,
                structured_mode=mode,
                sample=first.sample,
            )
            [generation] = await self.generate([attempt])
            if generation.error is not None:
                raise TransportFailure(generation.error, generation.interrupted)
            raw.append(generation.text)
            if screen is not None:
                generation = generation.model_copy(update={"text": screen(generation.text)})
            return _as_chat_completion(generation, self.label)

        patched: Any = instructor.patch(create=create, mode=_instructor_mode(mode))
        try:
            value = await patched(
                response_model=response_model,
                messages=[m.model_dump() for m in first.messages],
                max_retries=max_reasks,
                context=context,
            )
        except InstructorRetryException as exc:
            return _failure(exc, raw)
        return Structured(value=value, attempts=len(raw), raw=raw)


def _failure(exc: Any, raw: list[str]) -> Structured[Any]:
    """The outcome of a structured request instructor gave up on: unreachable, or invalid."""
    cause = exc.__cause__
    unreachable = isinstance(cause, TransportFailure)
    if unreachable:
        reason = f"transport: {cause}"
    else:
        reason = f"invalid output after {exc.n_attempts} attempts: {_first_line(cause)}"
    return Structured(
        value=None,
        error=reason,
        attempts=exc.n_attempts,
        raw=raw,
        unreachable=unreachable,
        interrupted=unreachable and cause.interrupted,  # type: ignore[union-attr]
    )


def _instructor_mode(mode: str) -> Any:
    import instructor

    # `guided`: the backend writes the JSON itself (models/guided.py) from the schema it is
    # handed, so the prompt is left as the agent wrote it and the reply is parsed as JSON.
    modes = {
        "json": instructor.Mode.JSON,
        "guided": instructor.Mode.JSON_SCHEMA,
        "md_json": instructor.Mode.MD_JSON,
        "tools": instructor.Mode.TOOLS,
    }
    return modes[mode]


def _first_line(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    text = str(exc).strip()
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            details = errors()
            if details:
                first = details[0]
                where = ".".join(str(p) for p in first.get("loc", ())) or "output"
                return f"{where}: {first.get('msg', text)}"
        except Exception:  # noqa: BLE001 - fall back to the plain message
            pass
    return text.splitlines()[0] if text else type(exc).__name__


def _as_chat_completion(generation: Generation, model: str) -> Any:
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(
        {
            "id": "gramagents",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": generation.text},
                }
            ],
            "usage": {
                "prompt_tokens": generation.prompt_tokens or 0,
                "completion_tokens": generation.completion_tokens or 0,
                "total_tokens": (generation.prompt_tokens or 0)
                + (generation.completion_tokens or 0),
            },
        }
    )
