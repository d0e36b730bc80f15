"""Model backends behind one protocol: generate, loglikelihood and structured."""

from .base import Backend, BackendSettings, NotSupported, Stats
from .model import Model, Structured
from .registry import create_backend, known_backends
from .spec import ModelSpec, parse_spec

__all__ = [
    "Backend",
    "BackendSettings",
    "Model",
    "ModelSpec",
    "NotSupported",
    "Stats",
    "Structured",
    "create_backend",
    "known_backends",
    "parse_spec",
]
