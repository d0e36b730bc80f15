"""Model spec strings.

``smollm2``                              the embedded default (SmolLM2-135M-Instruct GGUF)
``hf:PATH_OR_ID[?gguf_file=F&dtype=D&device=X&batch_size=N&revision=R]``
``openai:MODEL[@BASE_URL][?timeout=S&structured=json|md_json|tools&api_key_env=VAR
                           &client=openai|langchain&http=aiohttp|httpx
                           &echo_max_tokens=1|0&prefix=TEXT&max_reply_bytes=N]``

Options after ``?`` are ``key=value`` pairs joined by ``&``; each backend says which it takes.
A spec is written and printed only in its display form (`ModelSpec.label`), with credentials
(``user:password@`` in the URL, options such as ``api_key``) shown as ``***``.
Every backend also takes the decoding options (``temperature``, ``top_p``, ``seed``,
``max_tokens``): they replace the task's (or agent's) decoding for that model, so one model at
two decoding settings is two specs, e.g. ``smollm2`` and ``smollm2?temperature=0.8&seed=1``.

Every backend also takes the series options, which change no request and are read only by
reports that plot a family of models against a number: ``params`` (parameter count),
``tokens`` (training tokens of a checkpoint), ``step`` (training step), each a number with an
optional K, M, B or T (``params=7B``, ``tokens=2.64T``), and ``family`` (the name of the
series; default: the spec without its series options).
"""

from __future__ import annotations

import math
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
SERIES_OPTIONS = ("params", "tokens", "step", "family")
"""Spec options every backend takes and no request uses: what a series plot reads."""
_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}

TRANSPORT_OPTIONS = frozenset(
    {
        "timeout",
        "api_key_env",
        "client",
        "http",
        "max_reply_bytes",
        "batch_size",
        "token_budget",
        "prefix_sharing",
        "lanes",
    }
)
"""Spec options that change how requests travel or are batched, never their answers: they are
not part of a model's name."""


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
        """The name records, reports, logs and errors use: the spec without its endpoint, redacted.

        The spec without its endpoint and transport options, so that the same model asked on
        another port is the same model: `openai:m@http://h:8000/v1?timeout=5&temperature=0.8`
        is `openai:m?temperature=0.8`; the endpoint is recorded beside the name (`endpoint`).
        Credentials (options such as `api_key`) show as `***`.
        """
        body, _, query = self.raw.partition("?")
        if self.base_url is not None:
            body = body[: body.index("@http")]
        kept = [p for p in query.split("&") if p and p.partition("=")[0] not in TRANSPORT_OPTIONS]
        return redact(body + ("?" + "&".join(kept) if kept else ""))

    @property
    def endpoint(self) -> str | None:
        """The server the model is asked on, when the spec names one, redacted."""
        return None if self.base_url is None else redact(self.base_url)

    def option(self, name: str, default: str | None = None) -> str | None:
        """Value of option `name`, or `default`."""
        return self.options.get(name, default)

    def whole(self, name: str, least: int = 1) -> int | None:
        """Option `name` as an integer of at least `least`; None when not given."""
        value = self.option(name)
        if value is None:
            return None
        if not value.isdigit() or int(value) < least:
            what = "a positive integer" if least == 1 else f"an integer of {least} or more"
            raise SpecError(self.raw, f"{name} must be {what}, not '{value}'")
        return int(value)

    def choice(self, name: str, allowed: tuple[str, ...], default: str | None = None) -> str:
        """Option `name`, one of `allowed` (when not given, `default` or else the first)."""
        value = (self.option(name) or default or allowed[0]).lower()
        if value not in allowed:
            listed = ", ".join(allowed[:-1]) + f" or {allowed[-1]}"
            raise SpecError(self.raw, f"{name} must be {listed}, not '{value}'")
        return value

    def reject_unknown_options(self, known: set[str]) -> None:
        """Raise a SpecError naming the first option the backend does not take.

        The decoding options are taken by every backend (see `decoding`).
        """
        known = known | set(DECODING_OPTIONS) | set(SERIES_OPTIONS)
        for name in SERIES_OPTIONS[:-1]:
            if name in self.options:
                series_number(self, name)
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


def spec_label(raw: str) -> str:
    """The name a spec is written under (`ModelSpec.label`).

    A spec that does not parse is written as it is, redacted.
    """
    try:
        return parse_spec(raw).label
    except SpecError:
        return redact(raw)


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


def series_number(spec: ModelSpec, name: str) -> float | None:
    """The value of a numeric series option (`params=7B` is 7e9); None when not given."""
    raw = spec.options.get(name)
    if raw is None:
        return None
    text = raw.strip().upper()
    scale = _SCALE.get(text[-1:], None) if text[-1:].isalpha() else 1.0
    number = text[:-1] if text[-1:].isalpha() else text
    try:
        value = float(number) * scale if scale is not None else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise SpecError(spec.raw, f"{name} must be a number such as 7B or 220000, not '{raw}'")
    return value
