"""What every model backend provides, and the settings the run gives it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from ..records import ChatRequest, Generation, Loglikelihood, LoglikelihoodRequest
from ..runtime.retry import RetryPolicy
from .spec import ModelSpec


class BackendSettings(BaseModel):
    """Run-level settings every backend receives."""

    concurrency: int = 16
    """Requests in flight at once (remote backends)."""
    request_timeout: float = 120.0
    """Seconds before one HTTP request times out (it is then retried)."""
    retry: RetryPolicy = RetryPolicy()


@dataclass
class Stats:
    """Counters a backend and its cache layer keep; `requests_sent` includes retries."""

    requests_sent: int = 0
    cache_hits: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    """Tokens of the prompts answered afresh, where the backend reports them."""
    completion_tokens: int = 0
    """Tokens of the answers made afresh, where the backend reports them."""
    shared: int = 0
    """Requests identical to another of the same batch, answered by that one's single call
    (neither sent nor served from the cache)."""

    def snapshot(self) -> dict[str, int]:
        """The counters as a plain dict."""
        return {
            "requests_sent": self.requests_sent,
            "cache_hits": self.cache_hits,
            "failed": self.failed,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "shared": self.shared,
        }

    def count_tokens(self, answers: Iterable[Generation]) -> None:
        """Add the tokens the backend reported for `answers` (made afresh, not cached)."""
        for answer in answers:
            self.prompt_tokens += answer.prompt_tokens or 0
            self.completion_tokens += answer.completion_tokens or 0


class NotSupported(Exception):
    """The backend cannot do what was asked (e.g. loglikelihood over a chat API)."""


class Backend(ABC):
    """A model backend. Subclasses implement `complete`; the rest is optional.

    Backends never touch the cache: `Model` (models/model.py) wraps a backend with the cache,
    the counters and structured output, so every backend gets them the same way.
    """

    name: ClassVar[str]
    supports_loglikelihood: ClassVar[bool] = False
    """Whether `loglikelihood` works (local models, OpenAI-compatible completions servers);
    minimal-pair tasks need it."""
    structured_mode: ClassVar[str] = "json"
    """How structured output is asked for: `json` (response_format) or `md_json` (a fenced
    JSON block in plain text, for models without constrained decoding)."""
    answers_one_by_one: ClassVar[bool] = False
    """Whether requests are answered independently (remote backends): the cache layer then
    stores each answer (completion or log-likelihood) as it arrives, so a run killed while
    others are still out loses only those in flight. Batching backends answer a batch at once
    and keep this False."""
    counts_answers: ClassVar[bool] = False
    """Whether the backend reports each answer to the asker's progress itself as it arrives
    (a batcher does, runtime/batching.py); else the model layer reports them
    (runtime/answers.py)."""

    def __init__(self, spec: ModelSpec, settings: BackendSettings) -> None:
        self.spec = spec
        self.settings = settings
        self.stats = Stats()

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """What identifies the model's answers in the cache key; must not load weights."""

    @abstractmethod
    async def complete(self, requests: list[ChatRequest]) -> list[Generation]:
        """Answer chat requests; a request that fails after retries gets `Generation.error`."""

    async def loglikelihood(self, requests: list[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Log-probabilities of continuations (backends with `supports_loglikelihood`)."""
        raise NotSupported(f"{self.spec.label} cannot score log-likelihoods")

    async def check(self) -> None:  # noqa: B027 - optional hook
        """Fail early (BackendUnavailable) when the model cannot be reached or loaded."""

    async def check_loglikelihood(self) -> None:  # noqa: B027 - optional hook
        """Fail early when the model cannot score log-likelihoods after all.

        A remote server may lack prompt log-probabilities; called after `check` when a run has
        minimal pairs.
        """

    @property
    def chunk_size(self) -> int:
        """Items per unit of work the eval graph fans out."""
        return max(16, self.settings.concurrency)

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
