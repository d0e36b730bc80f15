"""Model spec strings.

``smollm2``                              the embedded default (SmolLM2-135M-Instruct GGUF)
``hf:PATH_OR_ID[?gguf_file=F&dtype=D&device=X&batch_size=N&revision=R]``
``openai:MODEL[@BASE_URL][?timeout=S&structured=json|md_json|tools&api_key_env=VAR
                           &client=openai|langchain&http=aiohttp|httpx
                           &echo_max_tokens=1|0&prefix=TEXT]``

Options after ``?`` are ``key=value`` pairs joined by ``&``; each backend says which it takes.
A spec is written and printed only in its display form (`ModelSpec.label`), with credentials
(``user:password@`` in the URL, options such as ``api_key``) shown as ``***``.
Every backend also takes the decoding options (``temperature``, ``top_p``, ``seed``,
``max_tokens``): they replace the task's (or agent's) decoding for that model, so one model at
two decoding settings is two specs, e.g. ``smollm2`` and ``smollm2?temperature=0.8&seed=1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from ..errors import SpecError
from ..redact import redact

DECODING_OPTIONS: dict[str, type] = {
    "temperature": float,
    "top_p": float,
    "seed": int,
    "max_tokens": int,
}
"""Spec options every backend takes: they override the decoding parameters of each request."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec."""

    raw: str
    backend: str
    target: str = ""
    base_url: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The name records, reports, logs and errors use: the spec as given, redacted.

        Its credentials (userinfo of the URL, options such as `api_key`) show as `***`.
        """
        return redact(self.raw)

    def option(self, name: str, default: str | None = None) -> str | None:
        """Value of option `name`, or `default`."""
        return self.options.get(name, default)

    def reject_unknown_options(self, known: set[str]) -> None:
        """Raise a SpecError naming the first option the backend does not take.

        The decoding options are taken by every backend (see `decoding`).
        """
        known = known | set(DECODING_OPTIONS)
        unknown = sorted(set(self.options) - known)
        if unknown:
            listed = ", ".join(sorted(known)) or "none"
            raise SpecError(
                self.raw, f"unknown option '{unknown[0]}' (this backend takes: {listed})"
            )


def parse_spec(raw: str) -> ModelSpec:
    """Parse a spec string; malformed specs raise SpecError."""
    text = raw.strip()
    if not text:
        raise SpecError(raw, "empty model spec")
    body, _, query = text.partition("?")
    options: dict[str, str] = {}
    if query:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
        if not pairs:
            raise SpecError(raw, f"cannot read options '{query}' (expected key=value&key=value)")
        for key, value in pairs:
            if key in options:
                raise SpecError(raw, f"option '{key}' is given twice")
            options[key] = value
    backend, colon, target = body.partition(":")
    backend = backend.strip().lower()
    if not backend:
        raise SpecError(raw, "missing backend name before ':'")
    base_url = None
    for scheme in ("@http://", "@https://"):
        if colon and scheme in target:
            name, _, rest = target.partition("@")
            target, base_url = name, rest.rstrip("/")
            break
    if colon and not target:
        raise SpecError(raw, f"missing model after '{backend}:'")
    return ModelSpec(raw=text, backend=backend, target=target, base_url=base_url, options=options)


def decoding_overrides(spec: ModelSpec) -> dict[str, float | int]:
    """The decoding options of a spec, checked (a bad value is a SpecError)."""
    overrides: dict[str, float | int] = {}
    for name, kind in DECODING_OPTIONS.items():
        raw = spec.options.get(name)
        if raw is None:
            continue
        try:
            value = kind(raw)
        except ValueError:
            what = "a number" if kind is float else "an integer"
            raise SpecError(spec.raw, f"{name} must be {what}, not '{raw}'") from None
        if name == "temperature" and value < 0:
            raise SpecError(spec.raw, "temperature must be 0 or more")
        if name == "top_p" and not 0 < value <= 1:
            raise SpecError(spec.raw, "top_p must be in (0, 1]")
        if name == "max_tokens" and value < 1:
            raise SpecError(spec.raw, "max_tokens must be at least 1")
        overrides[name] = value
    return overrides
