"""The options of a local model's spec (`hf:…?batch_size=8&dtype=float32`).

Each is checked with one line naming the option and the value refused.
"""

from __future__ import annotations

from ..errors import SpecError
from .spec import ModelSpec

OPTIONS = {
    "gguf_file",
    "dtype",
    "device",
    "batch_size",
    "revision",
    "structured",
    "prefix_sharing",
    "token_budget",
    "max_length",
    "guided_steps",
    "lanes",
}


def whole(spec: ModelSpec, name: str, least: int = 1) -> int | None:
    """The option `name` as an integer of at least `least`; None when not given."""
    value = spec.option(name)
    if value is None:
        return None
    if not value.isdigit() or int(value) < least:
        what = "a positive integer" if least == 1 else f"an integer of {least} or more"
        raise SpecError(spec.raw, f"{name} must be {what}, not '{value}'")
    return int(value)


def one_of(spec: ModelSpec, name: str, allowed: tuple[str, ...]) -> str:
    """The option `name`, one of `allowed` (the first when not given)."""
    value = spec.option(name, allowed[0]).lower()
    if value not in allowed:
        listed = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
        raise SpecError(spec.raw, f"{name} must be {listed}, not '{value}'")
    return value
