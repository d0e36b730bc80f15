"""Backends register a factory by name; heavy packages are imported only when one is used."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import SpecError
from .base import Backend, BackendSettings
from .spec import ModelSpec, decoding_overrides, parse_spec

BackendClass = type[Backend]
_FACTORIES: dict[str, Callable[[], BackendClass]] = {}
_UNLISTED: set[str] = set()
"""Backends for tests and drills, left out of the names an error message offers."""


def backend(
    name: str, listed: bool = True
) -> Callable[[Callable[[], BackendClass]], Callable[[], BackendClass]]:
    """Register a zero-argument function that imports and returns a backend class.

    `listed=False` keeps a backend meant for tests out of the names users are offered.
    """

    def register(factory: Callable[[], BackendClass]) -> Callable[[], BackendClass]:
        _FACTORIES[name] = factory
        if not listed:
            _UNLISTED.add(name)
        return factory

    return register


def known_backends(listed_only: bool = False) -> list[str]:
    """Names of registered backends (`listed_only`: those offered to users)."""
    _load_builtin()
    return sorted(n for n in _FACTORIES if not (listed_only and n in _UNLISTED))


def create_backend(spec: str | ModelSpec, settings: BackendSettings | None = None) -> Backend:
    """Build the backend a spec names (weights are loaded lazily, on first use)."""
    _load_builtin()
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    factory = _FACTORIES.get(parsed.backend)
    if factory is None:
        offered = ", ".join(known_backends(listed_only=True))
        raise SpecError(parsed.raw, f"unknown backend '{parsed.backend}' (known: {offered})")
    decoding_overrides(parsed)  # a bad decoding option fails here, before anything runs
    return factory()(parsed, settings or BackendSettings())


def _load_builtin() -> None:
    from . import _builtin  # noqa: F401 - registers the packaged backends
