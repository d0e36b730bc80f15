"""Prompt templates: Jinja2 in markdown files, rendered in a sandbox into chat messages.

A template file is the user message, optionally preceded by YAML front matter::

    ---
    description: SINGLE, the paper's Chinese wording
    system: You are a Chinese grammar teacher.   # optional system message (also Jinja)
    ---
    请判断：在句子“{{ sentence }}”中……

A template may hold several chat turns: a line `[[assistant]]`, `[[user]]` or `[[system]]` on
its own starts a message of that role (the text before the first marker is a user message), so
worked examples can be shown as turns of a conversation. Front matter `base: NAME` names a
second template file, the *continuation form* of the prompt: one text that a model without a
chat template (a base model) continues, e.g. one ending in `Answer: The answer is “`. A request
carries both forms; the backend sends the one its model reads (`ChatRequest.base_prompt`).
Front matter `verbatim: true` sends the body as one user message exactly as it renders, with
the whitespace around it (a published prompt that ends in a newline keeps it); otherwise
each message is stripped.

The template's hash (of the file's bytes, and of its base form's when it has one) is recorded
with every request rendered from it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

from . import resources
from .errors import GramagentsError, InputError
from .records import Message
from .sources._text import load_yaml_with_lines

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
    base: Any | None = None
    """The continuation form for models without a chat template (front matter `base:`)."""
    base_path: Path | None = None

    def render(self, variables: dict[str, Any]) -> list[Message]:
        """Render into chat messages (system first when the template has one)."""
        try:
            messages = []
            if self.system is not None:
                messages.append(Message(role="system", content=self.system.render(variables)))
            body = self.user.render(variables)
            if self.meta.get("verbatim"):
                messages.append(Message(role="user", content=body))
            else:
                messages += _turns(body)
        except UndefinedError as exc:
            raise GramagentsError(f"{self.path}: {exc.message}") from None
        return messages

    def render_base(self, variables: dict[str, Any]) -> str | None:
        """The continuation form as one text (None when the template has none).

        Only blank lines around it are dropped: a continuation may end in a space.
        """
        if self.base is None:
            return None
        try:
            return str(self.base.render(variables)).strip("\n")
        except UndefinedError as exc:
            raise GramagentsError(f"{self.base_path}: {exc.message}") from None


_TURN = re.compile(r"^\[\[(system|user|assistant)\]\][ \t]*$", re.MULTILINE)


def _turns(text: str) -> list[Message]:
    """The messages of a rendered body: one user message, or the turns its markers start."""
    parts = _TURN.split(text)
    if len(parts) == 1:
        return [Message(role="user", content=text.strip())]
    turns = [("user", parts[0]), *zip(parts[1::2], parts[2::2], strict=True)]
    return [
        Message.model_validate({"role": role, "content": body.strip()})
        for role, body in turns
        if body.strip()
    ]


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str, int]:
    """Front matter, body and the body's first line of a markdown text with LF line ends."""
    if not text.startswith("---\n"):
        return {}, text, 1
    end = text.find("\n---\n", 4)
    if end < 0:
        raise InputError(path, "front matter opened with '---' is never closed", line=1)
    meta, _ = load_yaml_with_lines(path, text[:end])  # from its `---` line: lines as in the file
    meta = {} if meta is None else meta
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
    meta, body, body_line = split_front_matter(text, path)
    system_src = meta.pop("system", None)
    if system_src is not None and not isinstance(system_src, str):
        raise InputError(path, "must be a string", line=2, field="system")
    base = meta.get("base")
    if base is not None and not isinstance(base, str):
        raise InputError(path, "must be the name of a template file", line=2, field="base")
    system = _compile(system_src, path, 2) if system_src else None
    return PromptTemplate(
        name=name,
        path=path,
        hash=digest,
        user=_compile(body, path, body_line),
        system=system,
        meta=meta,
    )


@lru_cache(maxsize=256)
def _load_body(path: Path, digest: str) -> Any:
    """A continuation form: a template body (any front matter is description only)."""
    _, body, body_line = split_front_matter(resources.read_text(path), path)
    return _compile(body, path, body_line)


def load_prompt(name: str) -> PromptTemplate:
    """Load the template `name` (relative to `prompts/`), user copies first.

    Raises:
        resources.ResourceRefused: `name` leads outside the prompt folders.
        GramagentsError: No prompt folder has it.
    """
    path = resources.find("prompts", name)
    template = _load(path, resources.file_hash(path), name)
    base_name = template.meta.get("base")
    if base_name is None:
        return template
    try:
        base_path = resources.find("prompts", base_name)
    except resources.ResourceRefused as exc:
        raise InputError(path, f"template '{base_name}' {exc.why}", line=2, field="base") from None
    except GramagentsError:
        raise InputError(path, f"template '{base_name}' not found", line=2, field="base") from None
    base_digest = resources.file_hash(base_path)
    both = hashlib.sha256(f"{template.hash}\n{base_digest}".encode()).hexdigest()
    return replace(
        template, hash=both, base=_load_body(base_path, base_digest), base_path=base_path
    )
