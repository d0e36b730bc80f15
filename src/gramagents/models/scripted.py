"""Test-only backend: answers from a Python function and records the requests it gets.

Graph and workflow tests use it where the model's answers must be known in advance. A script
is registered under a name and selected with the spec `scripted:NAME` (options: `delay` in
seconds per request, `structured` = `json` or `md_json`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar

from ..errors import SpecError
from ..records import ChatRequest, Generation
from .base import Backend, BackendSettings
from .spec import ModelSpec

Responder = Callable[[ChatRequest], str]

CALLS_KEPT = 16
"""Requests `calls` remembers (the latest): enough for tests. Few, so that a long run does not
keep rendered prompts alive after their chunk (bench/graph.py measured 1,000 kept as about 1 %
of the eval's time, freed one by one long after they were made)."""


class ScriptedBackend(Backend):
    """Answers with `responder(request)`; an exception becomes a failed request."""

    name = "scripted"
    structured_mode = "md_json"
    scripts: ClassVar[dict[str, Responder]] = {}

    @classmethod
    def register(cls, name: str, responder: Responder) -> None:
        """Make `scripted:NAME` answer with `responder`."""
        cls.scripts[name] = responder

    def __init__(self, spec: ModelSpec, settings: BackendSettings) -> None:
        super().__init__(spec, settings)
        spec.reject_unknown_options({"delay", "structured"})
        if spec.target not in self.scripts:
            known = ", ".join(sorted(self.scripts)) or "none registered"
            raise SpecError(spec.raw, f"no script named '{spec.target}' ({known})")
        self.responder = self.scripts[spec.target]
        self.delay = float(spec.option("delay", "0") or 0)
        self.structured_mode = spec.option("structured", "md_json") or "md_json"  # type: ignore[misc]
        self.calls: deque[ChatRequest] = deque(maxlen=CALLS_KEPT)

    @property
    def chunk_size(self) -> int:
        """Large chunks when answers cost no waiting: there is no latency to overlap."""
        return 1000 if not self.delay else max(16, self.settings.concurrency)

    def identity(self) -> dict[str, Any]:
        """The script's name."""
        return {"backend": "scripted", "model": self.spec.target}

    async def complete(self, requests: list[ChatRequest]) -> list[Generation]:
        """Answer each request with the script."""
        results = []
        for request in requests:
            self.calls.append(request)
            self.stats.requests_sent += 1
            if self.delay:
                await asyncio.sleep(self.delay)
            try:
                results.append(Generation(text=self.responder(request), finish_reason="stop"))
            except Exception as exc:  # noqa: BLE001 - a scripted failure
                results.append(Generation(error=f"{type(exc).__name__}: {exc}"))
        return results
