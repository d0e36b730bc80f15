"""Secrets out of everything written or printed: `***` for credentials in text.

A model spec may carry a credential (`openai:m@http://user:PASSWORD@host/v1`, an option such
as `?api_key=...`), and error texts of HTTP clients repeat URLs and headers. What is written
(records, manifests, reports, the viewer's data) and what is printed (error lines, logs) goes
through `redact`, so a credential given on the command line ends up in none of them.
"""

from __future__ import annotations

import logging
import re

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s?#'\"]+)@")
"""`scheme://user:password@` (any userinfo at all: a user name alone may be a token)."""
_SECRET_WORDS = r"(?:key|token|secret|password|passwd|pwd|authorization|auth|credentials?)"
_OPTION = re.compile(
    r"(?P<name>(?<![\w.-])(?:(?:[\w-]*[_.-])?" + _SECRET_WORDS + r"|header[\w.-]*))"
    r"(?P<sep>=|\"\s*:\s*\"|:[ \t]+)(?P<value>[^&;\s\"',}]+)",
    re.IGNORECASE,
)
"""`api_key=...`, `token: ...`, `"password": "..."`, `header_Authorization=...`: a credential
given as an option, a header or a JSON field."""
_BEARER = re.compile(r"(?P<name>\b(?:Bearer|Basic)\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})")
_KEY_SHAPED = re.compile(r"\b(?P<prefix>sk|pk|rk|hf|gsk|xai)(?P<sep>[-_])[A-Za-z0-9_-]{12,}")
"""Strings shaped like API keys (`sk-...`, `hf_...`) wherever they appear."""


def is_secret_option(name: str) -> bool:
    """Whether a spec option's value is a credential (`api_key`, `token`, `header_...`)."""
    match = _OPTION.match(f"{name}=x")
    return match is not None and match["name"] == name


def redact_command(argv: list[str]) -> list[str]:
    """A command line as anything writes it (manifests, the lock's holder), redacted."""
    return [redact(arg) for arg in argv]


def redact(text: str) -> str:
    """`text` with every credential it shows replaced by `***`."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _BEARER.sub(lambda m: f"{m['name']}{MASK}", text)
    text = _OPTION.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", text)
    return _KEY_SHAPED.sub(lambda m: f"{m['prefix']}{m['sep']}{MASK}", text)


class RedactingFilter(logging.Filter):
    """A log filter that masks credentials in every record's message."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Replace the record's message by its redacted text (always kept)."""
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
