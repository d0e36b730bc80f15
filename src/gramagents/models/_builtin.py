"""Registration of the packaged backends (each imports its dependencies only when used)."""

from __future__ import annotations

from .registry import BackendClass, backend


@backend("hf")
def _hf() -> BackendClass:
    from .hf import HFBackend

    return HFBackend


@backend("smollm2")
def _smollm2() -> BackendClass:
    from .embedded import EmbeddedBackend

    return EmbeddedBackend


@backend("openai")
def _openai() -> BackendClass:
    from .openai_compat import OpenAIBackend

    return OpenAIBackend


@backend("scripted", listed=False)  # replies scripted in Python, for tests
def _scripted() -> BackendClass:
    from .scripted import ScriptedBackend

    return ScriptedBackend
