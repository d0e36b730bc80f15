"""Option texts in a reply: read as the option they name, never as answer letters.

A choice item's metadata lists its options (`options`: a list of `{"key", "text"}`, or a
mapping of letter to text). Where a reply repeats an option's text, that stretch is replaced
by one mark standing for the option, before any rule reads the reply: the letters inside an
option's own text (`固定短语：东A西B`) are then never taken for the letter the model gave, and
`quoted_options` tells which options the reply names by their text. Texts are matched without
case and with any punctuation or spaces between their letters and digits, so
`能愿动词 要` names the option `能愿动词：要`.

A reply that only gives back lines of the prompt among which an option's line stands
(`A. 公元前221年` as the prompt lays it out, or the options listed and cut off by the length
limit) is an echo (`option_lines_echoed`), not the option: a model copying the prompt's
lines and one choosing by copying its option's line cannot be told apart.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .echo import Prompt, line_key, weight
from .normalise import nfkc

MARK_BASE = 0xE000
"""Option i is marked by the private-use character `MARK_BASE + i`."""
MARK_END = 0xF8FF
"""The end of the private-use area: no item has more options than it holds."""
MIN_WEIGHT = 4
"""How much text an option needs to be looked for: a Latin letter or digit weighs 1, any other
(a Chinese character) 2. Shorter texts (`it`, `The`, `是`) are too common to name an option."""


def option_pairs(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, text) of every option in `meta`, whatever shape they come in."""
    options = meta.get("options")
    if isinstance(options, list):
        return [
            (str(o["key"]), str(o.get("text", "")))
            for o in options
            if (type(o) is dict or isinstance(o, Mapping)) and "key" in o
        ]
    if isinstance(options, Mapping):
        return [(str(k), str(v)) for k, v in options.items()]
    return []


@lru_cache(maxsize=65536)  # option texts recur across items: read each once
def _pattern(text: str) -> tuple[re.Pattern[str] | None, int]:
    """The pattern that finds an option's text in a reply, and how much text it is."""
    letters = [ch for ch in nfkc(text) if unicodedata.category(ch)[0] in "LN"]
    weight = sum(1 if ch.isascii() else 2 for ch in letters)
    if weight < MIN_WEIGHT:
        return None, weight
    body = r"[^\w]*".join(re.escape(ch) for ch in letters)
    head = r"(?<![^\W_])" if letters[0].isascii() else ""
    tail = r"(?![^\W_])" if letters[-1].isascii() else ""
    return re.compile(head + body + tail, re.IGNORECASE), weight


def option_spans(text: str, meta: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """The spans of `text` that repeat an option's text: (start, end, option index), in order.

    Longer texts are found first, and a span never overlaps another (`能愿动词：会不会` is
    not also `能愿动词：会`).
    """
    if len(text) < 2:
        return []
    options = option_pairs(meta)
    if not options:
        return []
    found = [(_pattern(option_text), index) for index, (_, option_text) in enumerate(options)]
    found.sort(key=lambda entry: -entry[0][1])
    taken = bytearray(len(text))
    spans: list[tuple[int, int, int]] = []
    for (pattern, _), index in found:
        if pattern is None:
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            taken[start:end] = b"\x01" * (end - start)
            spans.append((start, end, index))
    return sorted(spans)


def cut_option(text: str, meta: Mapping[str, Any]) -> int | None:
    """Where an option text begins that the reply's end cuts off, if one does.

    `1001.能愿动词：` stopped at the length limit in the middle of `能愿动词：会`: the longest
    such beginning, of at least `MIN_WEIGHT`. It names no option (several may begin so).
    """
    end = len(text.rstrip())
    best: int | None = None
    for _, option_text in option_pairs(meta):
        wanted = nfkc(option_text).strip()
        for size in range(len(wanted) - 1, 1, -1):
            start = end - size
            if start >= 0 and (best is None or start < best) and text[start:end] == wanted[:size]:
                if sum(1 if ch.isascii() else 2 for ch in wanted[:size]) >= MIN_WEIGHT:
                    best = start
                break
    return best


def mark(index: int) -> str:
    """The character that stands for option `index` in a read reply."""
    return chr(MARK_BASE + index)


def quoted_options(text: str, meta: Mapping[str, Any]) -> list[str]:
    """Keys of the options a read reply names by their text, in order, each once."""
    marks = [ord(ch) - MARK_BASE for ch in text if MARK_BASE <= ord(ch) < MARK_END]
    if not marks:
        return []
    options = option_pairs(meta)
    keys: list[str] = []
    for index in marks:
        if index < len(options) and options[index][0] not in keys:
            keys.append(options[index][0])
    return keys


def disagrees(key: str, text: str, meta: Mapping[str, Any]) -> bool:
    """Whether a read reply quotes the text of one other option, and not `key`'s own."""
    quoted = quoted_options(text, meta)
    return len(quoted) == 1 and quoted[0] != key


_KEY_END = ".．、:：)）"


def _option_line(
    line: str, options: list[tuple[str, str]], own: bool = True, cut: bool = False
) -> bool:
    """Whether a line (as `echo.line_key` gives it) is an option's key and an option's text.

    `own`: the key's own text (`A. 公元前221年`); else any option's (`A. 公元前206年`, the
    options given back under one letter). `cut`: or the beginning of one (the length limit
    cut it), after at least `MIN_WEIGHT` of text for a key's own, after the key for any.
    """
    texts = [line_key(nfkc(text)) for _, text in options]
    for key, text in options:
        if not line.startswith(key):
            continue
        rest = line[len(key) :].lstrip(_KEY_END)
        wanted = [line_key(nfkc(text))] if own else texts
        if rest in wanted:
            return True
        if cut and any(w.startswith(rest) for w in wanted):
            if not own or (rest and weight(rest) >= MIN_WEIGHT):
                return True
    return False


def option_lines_echoed(text: str, meta: Mapping[str, Any], prompt: Prompt) -> bool:
    """Whether a reply only gives back the prompt's options (and other lines of it).

    One line: an option's line as the prompt writes it (`A. 公元前221年`), or its beginning
    cut off by the length limit. Several lines: each a line of the prompt or an option's text
    under a key (`A. πr²`, `A. πd²`, `A. 2πr`: the options given back under one letter), the last
    possibly cut off, one of them at least an option's. `A`, `答案是A`, `A：公元前221年` and
    `A. 公元前206年` alone (a letter with another option's text: a conflict) are none.
    """
    options = option_pairs(meta)
    if not options:
        return False
    lines = [key for key in map(line_key, text.split("\n")) if key]
    if not lines:
        return False
    *head, last = lines
    prefix = any(line.startswith(last) for line in prompt.lines)
    if not head:
        if last in prompt.lines:
            return _option_line(last, options)
        return prefix and _option_line(last, options, cut=True)
    if not all(line in prompt.lines or _option_line(line, options, own=False) for line in head):
        return False
    if not (last in prompt.lines or prefix or _option_line(last, options, own=False, cut=True)):
        return False
    return any(_option_line(line, options, own=False, cut=True) for line in lines)
