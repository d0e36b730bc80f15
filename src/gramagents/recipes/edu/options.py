"""Options and answer letters of exam items, read by rules in the ways real exam files give them.

Options are found, in this order:

1. a separate field (`options`, a list of strings, a letter-keyed mapping, or one string);
2. a Python/JSON list literal ending the content (`['A.选项一', 'B.选项二', …]` on the last
   line), read with `ast.literal_eval` (or `json`); elements may lack their letter (the
   release's Ethics files leave it off the last one) and then take their place's letter. A list
   whose quotes do not parse (an apostrophe inside an element, a missing `]`) is cut at its
   `', '` separators;
3. the text after the last `选项：`/`选项:` (numbered statements ①②③④ before it stay in the
   stem); when it only names letters (`A. A B. D …`), the lettered groups or table rows
   before it, each option taking the group it names;
4. lettered options in the text, on one line or one per line, with or without a space after
   the letter: `A.` `A．` `A、` `A:` `A：` `A)` `(A)` `（A）` `(A)、`, also run together
   (`A.milkB.bread`). Letters run A, B, C, …, or appear once each in two columns (`A… C…`
   over `B… D…`); `_ordered` says which run is taken when the stem has letters of its own
   (`A、B两地`, `∠A：∠B`, `U.S.A.`);
5. letters alone on their lines (a table's rows), then a letter and a space (`A 山南`);
6. the two words a true-or-false item's instruction names (`A/B(对/错)`, `正确的选A，错误的选B`).

Options numbered instead of lettered after `选项：` (`选项: 1. 中美建交 2. …`, answered `['1']`)
are read by `numbered_options` and lettered in their order (1 is A); `number_answers` reads
such an item's answer.

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
    r"(?:[(（]\s*([A-H])\s*[)）][.．、:：]?"  # (A) （A） (A)、
    r"|(?<![(（])([A-H])\s*[.．、:：)）])"  # A. A． A、 A: A： A) A） - also `milkB.bread`
    r"[ \t\u3000]*"
)
_ANY_MARK = re.compile(_MARK.pattern + r"|(?:(?<=[\s\u3000])|^)([A-H])[ \t\u3000]+(?=[^\sA-Za-z])")
"""Marks with punctuation, or a letter and a space before a word that is not Latin (`A 山南`)."""
_WEAK = re.compile(r"[.．'\"0-9A-Za-z]")
"""What precedes a letter that may be part of a word or abbreviation (`U.S.A.`, `D.C.`,
`DNA.`) as well as an option mark (`A.milkB.bread`, `A.9B.24`): such a mark counts less."""
_PREFIX = re.compile(r"^\s*(?:[(（]\s*([A-H])\s*[)）][.．、:：]?|([A-H])\s*[.．、:：)）])\s*")
_MARKER_WORD = re.compile(r"选项\s*[:：]")
_MARKER_END = re.compile(r"选项\s*[:：]\s*$")
_ROW = re.compile(r"^[ \t]*([A-H])[ \t]*$", re.MULTILINE)
_YES, _NO = r"(?P<yes>对|正确|√|T|True)", r"(?P<no>错|错误|×|F|False)"
_TRUE_FALSE = [  # (pattern, which word is A)
    (re.compile(rf"A\s*/\s*B\s*[（(]\s*{_YES}\s*/\s*{_NO}\s*[)）]"), "yes-first"),
    (re.compile(rf"{_YES}\s*(?:/|或|、)?\s*{_NO}\s*[（(]\s*A\s*/\s*B\s*[)）]"), "yes-first"),
    (re.compile(rf"[（(]\s*A\s*/\s*B\s*{_YES}\s*/\s*{_NO}\s*[)）]"), "yes-first"),
    (re.compile(rf"{_YES}的?(?:选|写|填)\s*A\s*[，,；;]\s*{_NO}的?(?:选|写|填)\s*B"), "yes-first"),
    (re.compile(rf"{_YES}的?(?:选|写|填)\s*B\s*[，,；;]\s*{_NO}的?(?:选|写|填)\s*A"), "no-first"),
]
_LIST_START = re.compile(r"\[\s*['\"]")
_MARK_BEFORE = re.compile(r"(?:[(（]\s*[A-H]\s*[)）]|[A-H]\s*[.．、:：)）])[ \t\u3000]*$")
_LIST_SPLIT = re.compile(r"(?<=['\"])\s*,\s*(?=['\"])")
_ESCAPED = re.compile(r"\\n(?![a-z])")
"""A line break written as `\\n` inside a list element (not LaTeX's `\\nu`, `\\neq`, ...)."""
_EDGE_BREAKS = re.compile(r"^(?:\s|<[bB][rR]\s*/?>|\\n(?![a-z]))+|(?:\s|<[bB][rR]\s*/?>)+$")
_TRAILING = "；;，, \t\n\u3000"
_WRAPPING = re.compile(
    r"^(?:(?:正确)?答案|选项|(?i:answer|key))\s*(?:是|为|应为|:|：|(?i:is))?\s*|[\s。.]+$"
)
_MULTI = re.compile(r"[A-H](?:\s*(?:[,，、;；/&+]|和|及|与)?\s*[A-H])*")
_LOWER_MULTI = re.compile(r"[a-h](?:\s*[,，、;；/&+]?\s*[a-h])*")


_NUMBER_MARK = re.compile(r"(?:(?<=[\s\u3000])|^)[(（]?(\d{1,2})[)）]?\s*[.．、:：)）](?!\d)\s*")


class OptionError(ValueError):
    """Options that cannot be recovered, with the reason."""


def _clean(text: str) -> str:
    return text.strip().rstrip(_TRAILING).strip()


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
        found = _marked(text[marker[-1].end() :])
        before = text[: marker[-1].start()]
        if found and not all(v in LETTERS for v in found.values()):
            return _stem(before), found
        if found:  # `选项: A. A B. D …`: each option names one of the lettered groups before
            stem, groups = _lettered_text(before)
            if set(found.values()) <= set(groups):
                return stem, {k: groups[v] for k, v in found.items()}
            return stem, {}  # the groups it names are not there
    return _lettered_text(text)


def _lettered_text(text: str) -> tuple[str, dict[str, str]]:
    """Stem and options of text with lettered options, table rows or true-or-false words."""
    run = _run(text)
    if run:
        return _stem(text[: run[0].start()]), _texts(text, run)
    rows = _rows(text)
    if rows:
        return _stem(text[: rows[0].start()]), _texts(text, rows)
    return _stem(text), _true_false(text)


def _rows(text: str) -> list[re.Match[str]]:
    """Letters alone on their lines, A, B, C, … in order: the rows of a table of options."""
    rows: list[re.Match[str]] = []
    for mark in _ROW.finditer(text):
        if mark.group(1) == LETTERS[len(rows)]:
            rows.append(mark)
            if len(rows) == len(LETTERS):
                break
    return rows if len(rows) >= 2 else []


def _true_false(text: str) -> dict[str, str]:
    """The two options a true-or-false item names in its instruction (`A/B(对/错)`)."""
    for pattern, order in _TRUE_FALSE:
        found = pattern.search(text)
        if found:
            words = [found.group("yes"), found.group("no")]
            return dict(zip("AB", words if order == "yes-first" else words[::-1], strict=True))
    return {}


def _stem(text: str) -> str:
    """The stem, without `<br>` at its edges or `选项：` left dangling at its end."""
    return _MARKER_END.sub("", _EDGE_BREAKS.sub("", text)).strip()


def _run(text: str, anchored: bool = False) -> list[re.Match[str]]:
    """The marks of the options in `text` (none if fewer than two), in the order written.

    Marks with punctuation first (`A.` `(A)` ...); only when they give no run, letters
    followed by a space too (`A 山南 B 江南`). See `_ordered` for the choice among runs;
    letters that all appear once but out of order (two columns, `A… C…` over `B… D…`) are
    taken when they give more options than the ordered run. `anchored`: the options must
    start the text (after `选项：`).
    """
    for pattern in (_MARK, _ANY_MARK):
        marks = list(pattern.finditer(text))
        run = _ordered(text, marks)
        shuffled = _shuffled(text, marks, anchored)
        if len(shuffled) > len(run):
            run = shuffled
        if anchored and run and text[: run[0].start()].strip():
            run = []
        if run:
            return run
    return []


def _shuffled(text: str, marks: list[re.Match[str]], anchored: bool) -> list[re.Match[str]]:
    """The last marks, from an `A` (or the first mark), if their letters are A, B, C, … once.

    Each must follow a space, a line break or a Chinese character, and have text after it.
    """
    for first in range(len(marks)):
        if first and anchored:
            break
        if not anchored and _letter(marks[first]) != "A":
            continue
        tail = marks[first:]
        if len(tail) >= 3 and sorted(_letter(m) for m in tail) == list(LETTERS[: len(tail)]):
            return tail if all(_strong(text, m) for m in tail) and _filled(text, tail) else []
    return []


def _filled(text: str, run: list[re.Match[str]]) -> bool:
    """True when every option of `run` has some text."""
    ends = [m.start() for m in run[1:]] + [len(text)]
    return all(_clean(text[m.end() : end]) for m, end in zip(run, ends, strict=True))


def _ordered(text: str, marks: list[re.Match[str]]) -> list[re.Match[str]]:
    """The best A, B, C, … run among `marks`.

    One whose options all have text; the longest; then the one whose marks are most written
    alike (`A．` `B．` `C．`, not a stem's `A、B两地` before them); then the one whose marks most
    start lines or follow a space or a Chinese character (not `D.C.`, `U.S.A.`, `{A)}` in a
    formula); then the one that starts last (letters in the stem come before the options).
    """
    best: tuple[tuple[int, ...], list[int]] | None = None
    for first, start in enumerate(marks):
        if _letter(start) != "A":
            continue
        found = _chain(text, marks, first)
        if found is None:
            continue
        filled = int(_filled(text, [marks[k] for k in found[1]]))
        scored = ((filled, *found[0]), found[1])  # a run with an empty option only as a last resort
        if best is None or scored[0] > best[0]:
            best = scored
    return [marks[k] for k in best[1]] if best is not None and best[0][1] >= 2 else []


def _chain(
    text: str, marks: list[re.Match[str]], first: int
) -> tuple[tuple[int, int, int, int], list[int]] | None:
    """The best run from the `A` mark `first` (dynamic programming over the later marks)."""
    style = _style(marks[first])
    score: dict[int, tuple[int, int, int]] = {first: (1, 1, _strength(text, marks[first]))}
    back: dict[int, int] = {}
    for i in range(first + 1, len(marks)):
        place = LETTERS.index(_letter(marks[i]))
        for j, found in list(score.items()):
            if LETTERS.index(_letter(marks[j])) != place - 1 or marks[j].end() > marks[i].start():
                continue
            same = int(_style(marks[i]) == style)
            candidate = (found[0] + 1, found[1] + same, found[2] + _strength(text, marks[i]))
            if i not in score or candidate > score[i]:
                score[i], back[i] = candidate, j
    end = max(score, key=lambda k: score[k])
    run = [end]
    while run[-1] in back:
        run.append(back[run[-1]])
    return (*score[end], marks[first].start()), run[::-1]


def _strength(text: str, mark: re.Match[str]) -> int:
    """How surely a mark is one: 2 at a line's start, 1 after a space or a Chinese character.

    0 after a letter, a digit, a dot or a quote (`U.S.A.`, `A.9B.24`).
    """
    if mark.start() == 0 or text[mark.start() - 1] == "\n":
        return 2
    return int(not _WEAK.match(text[mark.start() - 1]))


def _strong(text: str, mark: re.Match[str]) -> bool:
    return _strength(text, mark) > 0


def _style(mark: re.Match[str]) -> str:
    return re.sub(r"[A-H\s]", "", mark.group(0))


def _letter(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def _texts(text: str, run: list[re.Match[str]]) -> dict[str, str]:
    options = {}
    for k, mark in enumerate(run):
        end = run[k + 1].start() if k + 1 < len(run) else len(text)
        options[_letter(mark)] = _clean(text[mark.end() : end])
    options = {k: options[k] for k in sorted(options)}
    empty = [k for k, v in options.items() if not v]
    if empty:
        raise OptionError(f"option {empty[0]} has no text (a picture, or a lost line?)")
    return options


def _marked(text: str) -> dict[str, str]:
    listed = _list_literal(text)
    if listed is not None:
        return lettered(listed[1])
    run = _run(text, anchored=True)
    return _texts(text, run) if run else {}


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
        cleaned = _EDGE_BREAKS.sub("", str(element))
        prefix = _PREFIX.match(cleaned)
        if prefix is not None:
            given = prefix.group(1) or prefix.group(2)
            if given != letter:
                raise OptionError(f"option {place + 1} is lettered {given}, expected {letter}")
            cleaned = cleaned[prefix.end() :]
        text = _clean(_ESCAPED.sub("\n", cleaned))
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


def numbered_options(text: str) -> tuple[str, dict[str, str]] | None:
    """Stem and options of `... 选项: 1. x 2. y ...`, lettered A, B, … in number order.

    Only after the last `选项：` marker, starting right after it and numbered 1, 2, 3, …
    (numbers out of this run stay in the option before them); None when the text has no
    such options.
    """
    marker = list(_MARKER_WORD.finditer(text))
    if not marker:
        return None
    rest = text[marker[-1].end() :]
    run: list[re.Match[str]] = []
    for mark in _NUMBER_MARK.finditer(rest):
        if int(mark.group(1)) == len(run) + 1 and (run or not rest[: mark.start()].strip()):
            run.append(mark)
    if len(run) < 2 or len(run) > len(LETTERS):
        return None
    options = {}
    for k, mark in enumerate(run):
        end = run[k + 1].start() if k + 1 < len(run) else len(rest)
        options[LETTERS[k]] = _clean(rest[mark.end() : end])
    if not all(options.values()):
        return None
    return _stem(text[: marker[-1].start()]), options


def number_answers(raw: Any, options: dict[str, str]) -> Any:
    """An answer given as option numbers (`['2']`, `"2"`) as letters (`["B"]`), else as it is."""
    values = raw if isinstance(raw, list) else [raw]
    found = [str(v).strip() for v in values if v is not None and str(v).strip()]
    if not found or not all(v.isdigit() and 1 <= int(v) <= len(options) for v in found):
        return raw
    return [LETTERS[int(v) - 1] for v in found]
