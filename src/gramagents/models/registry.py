"""Backends by name; the packaged ones are lazy targets, so torch or openai load only when used."""

from __future__ import annotations

from ..errors import SpecError
from ..plugins import Registry
from .base import Backend, BackendSettings
from .spec import ModelSpec, decoding_overrides, parse_spec

BackendClass = type[Backend]
BACKENDS: Registry[BackendClass] = Registry("backend")
"""Backend classes by the name a spec starts with (`hf:`, `openai:`, ...)."""

BACKENDS.lazy("hf", "gramagents.models.hf:HFBackend")
BACKENDS.lazy("smollm2", "gramagents.models.embedded:EmbeddedBackend")
BACKENDS.lazy("openai", "gramagents.models.openai_compat:OpenAIBackend")
BACKENDS.lazy("scripted", "gramagents.models.scripted:ScriptedBackend", listed=False)  # tests


def known_backends(listed_only: bool = False) -> list[str]:
    """Names of registered backends (`listed_only`: those offered to users)."""
    return BACKENDS.names(listed_only=listed_only)


def create_backend(spec: str | ModelSpec, settings: BackendSettings | None = None) -> Backend:
    """Build the backend a spec names (weights are loaded lazily, on first use)."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    cls = BACKENDS.get(parsed.backend)
    if cls is None:
        offered = ", ".join(known_backends(listed_only=True))
        raise SpecError(parsed.raw, f"unknown backend '{parsed.backend}' (known: {offered})")
    decoding_overrides(parsed)  # a bad decoding option fails here, before anything runs
    return cls(parsed, settings or BackendSettings())
