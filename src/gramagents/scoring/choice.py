"""Choice answers: an option letter (SIM-GRA) or an option code (CAT-GRA).

Rules only accept keys that are options of the item (`meta["options"]`). The reply reaches
them with every option text it repeats replaced by that option's mark (`options.py`), so the
letters inside an option's text (`固定短语：东A西B`) never count as answer letters. A reply
that names two options is a hedge (`A还是B`, "A or B") or a conflict (`答案是A … 答案是B`); a
letter and an option text that name different options (`B. 固定短语：东A西B`, the text being
C's) are a conflict; none is resolved by guessing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from .extract import CONFLICT, HEDGE, Invalid, Meta, chain
from .options import disagrees, option_pairs, quoted_options

_WRAPPING = " \t\r\n\"'“”‘’`*_[]()（）【】「」.。,，:：;；!！?？"
_LABELLED = re.compile(
    r"(?:答案|回答|选择|选项|应选|选|answer|option|choice)\s*(?:是|为|应为|应该是|is|:)?\s*:?\s*"
    r"[\"'“”(（【\[*]*\s*([A-Za-z])(?![A-Za-z])",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^[\W_]*([A-Z])(?:[.．、:：)）]|\s|$)")
_OR = r"\s*(?:或者?|或是|还是|也可能是?|\bor\b|/)\s*"


def _keys(meta: Meta) -> list[str]:
    options = meta.get("options")
    if isinstance(options, list) and all(type(o) is dict and "key" in o for o in options):
        return [str(o["key"]) for o in options]  # the usual shape, read without the texts
    return [key for key, _ in option_pairs(meta)]


@lru_cache(maxsize=4096)
def _standalone_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(key)}(?![A-Za-z0-9])")


def _standalone(key: str, text: str) -> bool:
    return _standalone_pattern(key).search(text) is not None


def _named(text: str, meta: Meta) -> list[str]:
    return [key for key in _keys(meta) if _standalone(key, text)]


def offers_alternatives(keys: list[str], text: str) -> bool:
    """Whether the reply offers two of `keys` as alternatives (`A还是B`, "A or B", `A/B`)."""
    pattern = "|".join(re.escape(k) for k in keys)
    found = re.search(rf"(?<![A-Za-z0-9])(?:{pattern}){_OR}(?:{pattern})(?![A-Za-z0-9])", text)
    return found is not None


def _several(keys: list[str], text: str) -> Invalid:
    """Two or more options named: alternatives offered are a hedge, else a conflict."""
    return Invalid(HEDGE if offers_alternatives(keys, text) else CONFLICT)


def _agrees(key: str, text: str, meta: Meta) -> str | Invalid:
    """`key`, unless the reply quotes the text of another option and not its own."""
    return Invalid(CONFLICT) if disagrees(key, text, meta) else key


def _exact(text: str, meta: Meta) -> str | None:
    stripped = text.strip(_WRAPPING)
    for key in _keys(meta):
        if stripped == key or (len(key) == 1 and stripped.upper() == key):
            return key
    return None


def _labelled(text: str, meta: Meta) -> Any:
    keys = set(_keys(meta))
    found = sorted({m.group(1).upper() for m in _LABELLED.finditer(text)} & keys)
    if len(found) > 1:
        return _several(found, text)
    return _agrees(found[0], text, meta) if found else None


def _leading(text: str, meta: Meta) -> Any:
    match = _LEADING.match(text)
    if match is None or match.group(1) not in _keys(meta):
        return None
    named = _named(text, meta)
    if len(named) > 1:  # "A or B" leads with a letter but answers nothing
        return _several(named, text)
    return _agrees(match.group(1), text, meta)


def _sole_key(text: str, meta: Meta) -> Any:
    named = _named(text, meta)
    if len(named) > 1:
        return _several(named, text)
    return _agrees(named[0], text, meta) if named else None


def _option_text(text: str, meta: Meta) -> Any:
    quoted = quoted_options(text, meta)
    return quoted[0] if len(quoted) == 1 else None


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
