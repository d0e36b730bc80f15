"""Choice answers: an option letter (SIM-GRA) or an option code (CAT-GRA).

Rules only accept keys that are options of the item (`meta["options"]`, a list of
`{"key", "text"}`); a reply naming two options, or none, is invalid.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from .extract import Meta, chain

_WRAPPING = " \t\r\n\"'“”‘’`*_[]()（）【】「」.。,，:：;；!！?？"
_LABELLED = re.compile(
    r"(?:答案|回答|选择|选项|选|answer|option|choice)\s*(?:是|为|应为|is|:|：)?\s*[:：]?\s*"
    r"[\"'“”(（【\[*]*\s*([A-Za-z])(?![A-Za-z])",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^[\W_]*([A-Z])(?:[.．、:：)）]|\s|$)")


def _keys(meta: Meta) -> list[str]:
    return [str(option["key"]) for option in meta.get("options") or []]


@lru_cache(maxsize=65536)  # option texts recur across items: normalise each once
def _normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] in "LN")


@lru_cache(maxsize=4096)
def _standalone_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(key)}(?![A-Za-z0-9])")


def _standalone(key: str, text: str) -> bool:
    return _standalone_pattern(key).search(text) is not None


def _exact(text: str, meta: Meta) -> str | None:
    stripped = text.strip(_WRAPPING)
    for key in _keys(meta):
        if stripped == key or (len(key) == 1 and stripped.upper() == key):
            return key
    return None


def _labelled(text: str, meta: Meta) -> str | None:
    keys = set(_keys(meta))
    found = {m.group(1).upper() for m in _LABELLED.finditer(text)} & keys
    return found.pop() if len(found) == 1 else None


def _leading(text: str, meta: Meta) -> str | None:
    match = _LEADING.match(text)
    if match is None or match.group(1) not in _keys(meta):
        return None
    key = match.group(1)
    others = [k for k in _keys(meta) if k != key and _standalone(k, text)]
    return None if others else key  # "A or B" is no answer


def _sole_key(text: str, meta: Meta) -> str | None:
    found = {key for key in _keys(meta) if _standalone(key, text)}
    return found.pop() if len(found) == 1 else None


def _option_text(text: str, meta: Meta) -> Any:
    reply = _normalise(text)
    found = set()
    for option in meta.get("options") or []:
        wanted = _normalise(option["text"])
        if len(wanted) >= 2 and wanted in reply:
            found.add(str(option["key"]))
    return found.pop() if len(found) == 1 else None


chain(
    "letter",
    [
        ("exact", _exact),
        ("labelled", _labelled),
        ("leading", _leading),
        ("sole-letter", _sole_key),
        ("option-text", _option_text),
    ],
)
chain("code", [("exact", _exact), ("sole-code", _sole_key), ("option-text", _option_text)])
