"""Prompt templates: Jinja2 in markdown files, rendered in a sandbox into chat messages.

A template file is the user message, optionally preceded by YAML front matter::

    ---
    description: SINGLE, the paper's Chinese wording
    system: You are a Chinese grammar teacher.   # optional system message (also Jinja)
    ---
    请判断：在句子“{{ sentence }}”中……

The template's hash (of the file's bytes) is recorded with every request rendered from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

from . import resources
from .errors import GramagentsError, InputError
from .records import Message

_ENV = SandboxedEnvironment(
    undefined=StrictUndefined, keep_trailing_newline=False, autoescape=False
)


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded prompt template."""

    name: str
    path: Path
    hash: str
    user: Any
    system: Any | None
    meta: dict[str, Any] = field(default_factory=dict)

    def render(self, variables: dict[str, Any]) -> list[Message]:
        """Render into chat messages (system first when the template has one)."""
        try:
            messages = []
            if self.system is not None:
                messages.append(Message(role="system", content=self.system.render(variables)))
            messages.append(Message(role="user", content=self.user.render(variables).strip()))
        except UndefinedError as exc:
            raise GramagentsError(f"{self.path}: {exc.message}") from None
        return messages


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str, int]:
    """Return (front matter, body, line number where the body starts)."""
    if not text.startswith("---\n"):
        return {}, text, 1
    end = text.find("\n---\n", 4)
    if end < 0:
        raise InputError(path, "front matter opened with '---' is never closed", line=1)
    try:
        meta = yaml.safe_load(text[4:end]) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise InputError(path, f"front matter is not valid YAML ({exc})", line=line) from None
    if not isinstance(meta, dict):
        raise InputError(path, "front matter must be a mapping", line=2)
    body_line = text[: end + 5].count("\n") + 1
    return meta, text[end + 5 :], body_line


_PRINT = _ENV.from_string("{{ v }}")
"""How Jinja prints one value (used for values other than strings and numbers)."""
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SYNTAX = ("{{", "{%", "{#", "}}", "%}", "#}")


class _Substitution:
    """A template made only of text and `{{ name }}` placeholders, rendered without Jinja.

    Gives exactly what Jinja gives for such a template (values through `str`, one trailing
    newline dropped, every line ending a plain newline) for a fraction of the cost: most items of a
    bank are rendered from the same simple template.
    """

    def __init__(self, source: str) -> None:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
        if source.endswith("\n"):
            source = source[:-1]
        parts = _PLACEHOLDER.split(source)
        self.texts = parts[0::2]
        self.names = parts[1::2]

    @staticmethod
    def applies(source: str) -> bool:
        """Whether `source` is text and plain placeholders only."""
        rest = _PLACEHOLDER.sub("", source)
        return not any(mark in rest for mark in _SYNTAX)

    def render(self, variables: dict[str, Any]) -> str:
        """The template with each placeholder replaced by its value."""
        out = [self.texts[0]]
        for name, text in zip(self.names, self.texts[1:], strict=True):
            try:
                value = variables[name]
            except KeyError:
                raise UndefinedError(f"'{name}' is undefined") from None
            if value is None or isinstance(value, bool | int | float | str):
                out.append(str(value))
            else:  # containers and the like: let Jinja decide how they print
                out.append(_PRINT.render(v=value))
            out.append(text)
        return "".join(out)


def _compile(source: str, path: Path, first_line: int) -> Any:
    try:
        compiled = _ENV.from_string(source)
        return _Substitution(source) if _Substitution.applies(source) else compiled
    except TemplateSyntaxError as exc:
        line = first_line + (exc.lineno or 1) - 1
        raise InputError(path, f"template syntax error: {exc.message}", line=line) from None


@lru_cache(maxsize=256)
def _load(path: Path, digest: str, name: str) -> PromptTemplate:
    text = resources.read_text(path)
    meta, body, body_line = _split_front_matter(text, path)
    system_src = meta.pop("system", None)
    if system_src is not None and not isinstance(system_src, str):
        raise InputError(path, "must be a string", line=2, field="system")
    system = _compile(system_src, path, 2) if system_src else None
    return PromptTemplate(
        name=name,
        path=path,
        hash=digest,
        user=_compile(body, path, body_line),
        system=system,
        meta=meta,
    )


def load_prompt(name: str) -> PromptTemplate:
    """Load the template `name` (relative to `prompts/`), user copies first."""
    path = resources.find("prompts", name)
    return _load(path, resources.file_hash(path), name)
