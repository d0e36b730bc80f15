"""Seeded fault plans for the test chat server (testing/openai_server.py).

A plan decides, for each chat request the server receives, whether to answer it or to fail it,
and how. The decision is a pure function of the plan's seed, the request body and how many
times the server has received that same body before, so it does not depend on the order in
which concurrent requests arrive: the same run against the same plan meets the same faults,
and each attempt (a retry sends the same body again) is an independent draw with probability
`rate`. That independence is what lets a benchmark derive the number of requests to expect
(bench/faults.py).

The kinds a plan draws from:

| kind | what the client sees |
| --- | --- |
| `429` | HTTP 429 with `Retry-After` (the plan's `retry_after`, in seconds) |
| `500`, `503` | an HTTP server error |
| `reset` | the connection reset (TCP RST) before any answer |
| `slow` | no answer for `hang_s` seconds (longer than the client's timeout) |
| `truncated` | a 200 whose body stops halfway (fewer bytes than its Content-Length) |
| `malformed` | a 200 whose body is not JSON |
| `invalid` | a well-formed completion whose content fails the response schema |
| `drip` | a 200 whose body comes one byte at a time (named only: not among the default kinds) |
| `oversized` | a 200 with a well-formed completion of 20 MB, without a Content-Length (idem) |

`invalid` applies only to requests that ask for structured output; other requests draw among
the remaining kinds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

PLAN_KINDS = ("429", "500", "503", "reset", "slow", "truncated", "malformed", "invalid")
"""The kinds of fault a plan draws by default."""
HOSTILE_KINDS = ("drip", "oversized")
"""Kinds a plan draws only when named: a body sent a byte at a time (`drip_s` apart), and a
well-formed answer of `size` bytes sent without a Content-Length."""
INVALID_OUTPUT = '{"gramagents_fault": "this object has none of the fields asked for"}'
"""The content of an `invalid` answer: JSON, but in no response schema's shape."""


@dataclass
class Fault:
    """What to do instead of answering one request."""

    kind: str
    """One of `PLAN_KINDS`, or `401`; `timeout` and `disconnect` are older names of `slow`
    and of a connection closed without a reset."""
    retry_after: float | None = None
    """Seconds sent in the `Retry-After` header of a 429."""
    hang_s: float = 30.0
    """How long a `slow` fault keeps the client waiting."""
    drip_s: float = 0.05
    """Seconds between the bytes of a `drip` answer."""
    size: int = 20_000_000
    """Bytes of an `oversized` answer."""


def wants_structured(body: dict[str, Any]) -> bool:
    """Whether a chat request asks for structured output (a response format or tools)."""
    return "response_format" in body or "tools" in body


def body_digest(body: dict[str, Any]) -> str:
    """sha256 of a request body's canonical JSON (what 'the same request' means here)."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FaultPlan:
    """Fail a seeded fraction of requests, with kinds drawn evenly from `kinds`."""

    rate: float = 0.0
    """Probability that one received request is failed."""
    kinds: tuple[str, ...] = PLAN_KINDS
    seed: int = 0
    retry_after: float = 0.1
    """Seconds a 429 asks the client to wait."""
    hang_s: float = 2.0
    """How long a `slow` answer takes; set it above the client's timeout."""

    def __post_init__(self) -> None:
        known = (*PLAN_KINDS, *HOSTILE_KINDS)
        unknown = sorted(set(self.kinds) - set(known))
        if unknown:
            raise ValueError(f"unknown fault kind {unknown[0]} (known: {', '.join(known)})")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the fault rate must be between 0 and 1, not {self.rate}")

    def choose(self, digest: str, seen: int, structured: bool) -> Fault | None:
        """The fault for the `seen`-th earlier copy of the body with `digest`, or None."""
        if self.rate <= 0.0:
            return None
        draw = hashlib.sha256(f"{self.seed}\0{seen}\0{digest}".encode()).digest()
        if int.from_bytes(draw[:8], "big") / 2**64 >= self.rate:
            return None
        kinds = [k for k in self.kinds if structured or k != "invalid"]
        if not kinds:
            return None
        kind = kinds[int.from_bytes(draw[8:12], "big") % len(kinds)]
        return Fault(kind, retry_after=self.retry_after, hang_s=self.hang_s)
