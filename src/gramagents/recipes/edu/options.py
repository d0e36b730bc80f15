"""Options and answer letters of exam items, read by rules in the ways real exam files give them.

Options are found, in this order:

1. a separate field (`options`, a list of strings, a letter-keyed mapping, or one string);
2. a Python/JSON list literal ending the content (`['A.选项一', 'B.选项二', …]` on the last
   line), read with `ast.literal_eval` (or `json`); elements may lack their letter (the
   release's Ethics files leave it off the last one) and then take their place's letter. A list
   whose quotes do not parse (an apostrophe inside an element, a missing `]`) is cut at its
   `', '` separators;
3. the text after the last `选项：`/`选项:` (numbered statements ①②③④ before it stay in the stem);
4. lettered options in the text, on one line or one per line, with or without a space after
   the letter: `A.` `A．` `A、` `A:` `A：` `A)` `(A)` `（A）`. Letters must run A, B, C, …; when
   the stem has letters of its own (`A、B两地`, `∠A：∠B`), the run that starts at the last
   `A` is taken among the longest.

An answer may be a letter (`"C"`, `"c"`, `"（C）"`, `"答案：C"`), a list (`["C"]`), several
letters (`"BD"`, `"B,D"`, `["A", "E"]`: a multiple-answer item), or an option's text instead
of its letter (`"公元前221年"`, `"A. 公元前221年"`).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from typing import Any

LETTERS = "ABCDEFGH"
_MARK = re.compile(
    r"(?:[(（]\s*([A-H])\s*[)）]"  # (A) （A）
    r"|(?<![A-Za-z(（])([A-H])\s*[.:)]"  # A. A: A) - not after a letter (U.S.A., TAB.)
    r"|(?<![(（])([A-H])\s*[．、：）])"  # A． A、 A： A） - also after one (2πrC．πd)
    r"[ \t\u3000]*"
)
_WEAK = re.compile(r"[.．'\"0-9]")
"""What precedes a letter that is more likely part of an abbreviation than an option mark."""
_PREFIX = re.compile(r"^\s*(?:[(（]\s*([A-H])\s*[)）]|([A-H])\s*[.．、:：)）])\s*")
_MARKER_WORD = re.compile(r"选项\s*[:：]")
_MARKER_END = re.compile(r"选项\s*[:：]\s*$")
_LIST_START = re.compile(r"\[\s*['\"]")
_MARK_BEFORE = re.compile(r"(?:[(（]\s*[A-H]\s*[)）]|[A-H]\s*[.．、:：)）])[ \t\u3000]*$")
_LIST_SPLIT = re.compile(r"(?<=['\"])\s*,\s*(?=['\"])")
_NOISE = re.compile(r"<br\s*/?>|\\n|\\r", re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TRAILING = "；;，, \t\n\u3000"
_WRAPPING = re.compile(
    r"^(?:(?:正确)?答案|选项|(?i:answer|key))\s*(?:是|为|应为|:|：|(?i:is))?\s*|[\s。.]+$"
)
_MULTI = re.compile(r"[A-H](?:\s*(?:[,，、;；/&+]|和|及|与)?\s*[A-H])*")
_LOWER_MULTI = re.compile(r"[a-h](?:\s*[,，、;；/&+]?\s*[a-h])*")


class OptionError(ValueError):
    """Options that cannot be recovered, with the reason."""


def _clean(text: str) -> str:
    return _NOISE.sub("\n", text).strip().rstrip(_TRAILING).strip()


def split_options(text: str) -> tuple[str, dict[str, str]]:
    """The stem and the options (letter -> text) of `text`; no options when there are none.

    Raises `OptionError` when options are there but cannot be read (an empty option, list
    elements lettered out of order).
    """
    listed = _list_literal(text)
    if listed is not None:
        stem, elements = listed
        return _stem(stem), lettered(elements)
    marker = list(_MARKER_WORD.finditer(text))
    if marker:
        after = text[marker[-1].end() :]
        found = _marked(after)
        if found:
            return _stem(text[: marker[-1].start()]), found
    run = _run(text)
    if not run:
        return _stem(text), {}
    return _stem(text[: run[0].start()]), _texts(text, run)


def _stem(text: str) -> str:
    """The stem, with `<br>` as a line break and no `选项：` left dangling at its end."""
    return _MARKER_END.sub("", _BREAK.sub("\n", text).strip()).strip()


def _run(text: str) -> list[re.Match[str]]:
    """The marks of the best A, B, C, … run.

    The longest; then the one with the most marks after a space, a line break or a Chinese
    character (not `D.C.` or `U.S.A.`); then the one that starts last (letters in the stem
    come before the options).
    """
    marks = list(_MARK.finditer(text))
    best: list[tuple[int, int, int] | None] = [None] * len(marks)
    back: list[int] = [-1] * len(marks)
    for i, mark in enumerate(marks):
        place = LETTERS.index(_letter(mark))
        strong = int(mark.start() == 0 or not _WEAK.match(text[mark.start() - 1]))
        if place == 0:
            best[i] = (1, strong, mark.start())
            continue
        for j in range(i):
            found = best[j]
            if found is None or _letter(marks[j]) != LETTERS[place - 1]:
                continue
            if marks[j].end() > mark.start():
                continue
            score = (found[0] + 1, found[1] + strong, found[2])
            if best[i] is None or score > best[i]:  # type: ignore[operator]
                best[i], back[i] = score, j
    ends = [i for i, score in enumerate(best) if score is not None and score[0] >= 2]
    if not ends:
        return []
    i = max(ends, key=lambda k: best[k])  # type: ignore[arg-type, return-value]
    run = []
    while i >= 0:
        run.append(marks[i])
        i = back[i]
    return run[::-1]


def _letter(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def _texts(text: str, run: list[re.Match[str]]) -> dict[str, str]:
    options = {}
    for k, mark in enumerate(run):
        end = run[k + 1].start() if k + 1 < len(run) else len(text)
        options[_letter(mark)] = _clean(text[mark.end() : end])
    empty = [k for k, v in options.items() if not v]
    if empty:
        raise OptionError(f"option {empty[0]} has no text (a picture, or a lost line?)")
    return options


def _marked(text: str) -> dict[str, str]:
    listed = _list_literal(text)
    if listed is not None:
        return lettered(listed[1])
    run = _run(text)
    return _texts(text, run) if run and not text[: run[0].start()].strip() else {}


def _list_literal(text: str) -> tuple[str, list[str]] | None:
    """The stem before a list literal that ends `text`, and the list's strings."""
    starts = [m.start() for m in _LIST_START.finditer(text)]
    starts = [k for k in starts if not _MARK_BEFORE.search(text[:k])]  # `D. ['x']`: an option
    if not starts:
        return None
    for start in starts:
        body = text[start:].rstrip()
        elements = _literal(body) if body.endswith("]") else None
        if elements is not None and len(elements) >= 2:
            return text[:start].strip(), elements
    start = starts[-1]
    before = text[:start].rstrip(" \t\u3000")
    if before and not before.endswith("\n") and not _MARKER_END.search(before):
        return None  # a list inside a sentence, not the options' own line
    body = text[start:].rstrip()
    if "]" in body and not body.endswith(("']", '"]')):
        return None  # brackets with text after them: not an options list
    elements = _cut(body)
    return (text[:start].strip(), elements) if len(elements) >= 2 else None


def _literal(body: str) -> list[str] | None:
    for parse in (ast.literal_eval, json.loads):
        try:
            value = parse(body)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        return None
    return None


def _cut(body: str) -> list[str]:
    """The elements of a list literal whose quoting does not parse, cut at `', '`."""
    inner = body[1:].strip()
    inner = re.sub(r"['\"]?\s*\]?\s*$", "", inner) if inner.endswith("]") else inner
    inner = inner.rstrip()
    parts = _LIST_SPLIT.split(inner)
    return [p.strip().strip("'\"") for p in parts]


def lettered(elements: list[str]) -> dict[str, str]:
    """Options from a list of strings, each with its letter (`A.…`) or in its letter's place."""
    if len(elements) > len(LETTERS):
        raise OptionError(f"{len(elements)} options: at most {len(LETTERS)} are read")
    options = {}
    for place, element in enumerate(elements):
        letter = LETTERS[place]
        cleaned = _NOISE.sub("\n", str(element)).strip()
        prefix = _PREFIX.match(cleaned)
        if prefix is not None:
            given = prefix.group(1) or prefix.group(2)
            if given != letter:
                raise OptionError(f"option {place + 1} is lettered {given}, expected {letter}")
            cleaned = cleaned[prefix.end() :]
        text = _clean(cleaned)
        if not text:
            raise OptionError(f"option {letter} has no text (a picture, or a lost line?)")
        options[letter] = text
    return options


def options_from_field(value: Any) -> dict[str, str]:
    """Options given in a field of their own: a list, a letter-keyed mapping, or a string."""
    if isinstance(value, dict):
        keyed = {}
        for key, text in value.items():
            letter = re.sub(r"[^A-Za-z]", "", str(key)).upper()
            if len(letter) != 1 or letter not in LETTERS:
                raise OptionError(f"option key {key!r} is not a letter A-H")
            keyed[letter] = _clean(str(text))
        return {k: keyed[k] for k in sorted(keyed)}
    if isinstance(value, list):
        return lettered([str(v) for v in value])
    if isinstance(value, str):
        _, found = split_options(value)
        return found
    raise OptionError(f"options of type {type(value).__name__}: a list or mapping expected")


def _normal(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] in "LN")


def answer_letters(raw: Any, options: dict[str, str]) -> list[str]:
    """The option letters an answer field gives, sorted; raises `OptionError` when it gives none.

    Letters are read first (`"B"`, `"BD"`, `"B、D"`, `["A", "E"]`), then an option's text
    (exact, then ignoring case, spaces and punctuation), then a letter followed by its option's
    text (`"A. 公元前221年"`).
    """
    values = raw if isinstance(raw, list) else [raw]
    letters: set[str] = set()
    for value in values:
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        letters |= _one_answer(str(value), options)
    if not letters:
        raise OptionError("no answer given" if raw in (None, "", []) else f"no answer in {raw!r}")
    unknown = sorted(letters - set(options))
    if unknown:
        raise OptionError(f"answer {unknown[0]} is not one of the options {''.join(options)}")
    return sorted(letters)


def _one_answer(value: str, options: dict[str, str]) -> set[str]:
    text = unicodedata.normalize("NFKC", value).strip()
    bare = _WRAPPING.sub("", text).strip("()[]【】'\"“” ")
    if re.fullmatch(_MULTI, bare):
        return set(re.findall(r"[A-H]", bare))
    exact = [k for k, v in options.items() if v.strip() == value.strip()]
    if len(exact) == 1:
        return {exact[0]}
    if re.fullmatch(_LOWER_MULTI, bare):
        return {c.upper() for c in re.findall(r"[a-h]", bare)}
    wanted = _normal(value)
    loose = [k for k, v in options.items() if wanted and _normal(v) == wanted]
    if len(loose) == 1:
        return {loose[0]}
    prefix = _PREFIX.match(text)
    if prefix is not None:
        letter = prefix.group(1) or prefix.group(2)
        rest = _normal(text[prefix.end() :])
        if letter in options and rest and rest == _normal(options[letter]):
            return {letter}
    raise OptionError(f"answer {value!r} is neither option letters nor an option's text")
