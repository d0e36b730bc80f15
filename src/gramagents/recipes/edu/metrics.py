"""EduEval metrics (Table 1): answer extraction, ROUGE-L and RMSE.

QWK and Pearson are `edu.statistics.quadratic_kappa` and `edu.statistics.pearson`, shared
with the agreement statistics; prompts too long for a local model are cut in the middle by
the backend (`models.hf`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple

from ...api import lcs_overlap

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# The extraction chain, first match wins: each rule names itself in the result.
_CHOICE_RULES: list[tuple[str, str]] = [
    ("bare", r"^\s*[(（\[【]?\s*([A-Z])\s*[)）\]】]?\s*[.。．、]?\s*$"),
    ("answer-is-zh", r"答案\s*(?:是|为|应为|应该是)?\s*[:：]?\s*[(（\[【]?\s*([A-Z])(?![A-Za-z])"),
    ("choose-zh", r"(?:选择|选项|应选|选)\s*[:：]?\s*[(（\[【]?\s*([A-Z])(?![A-Za-z])"),
    ("answer-is-en", r"(?i:the\s+(?:correct\s+)?answer\s+is|answer\s*[:：])\s*[(\[]?\s*([A-Z])\b"),
    ("leading", r"^\s*[(（\[【]?([A-Z])[)）\]】.．、:：\s]"),
]


def extract_choice(text: str, letters: str = "ABCD") -> tuple[str | None, str]:
    """The option letter a reply gives, and the name of the rule that found it.

    Rules in order: a bare letter, `答案是B` / `答案：B`, `选择B` / `选B`, "the answer is B" /
    "answer: B", a letter leading the reply, then the only allowed letter standing alone.
    Returns `(None, "invalid")` when none applies.
    """
    allowed = set(letters)
    alone = {m for m in re.findall(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", text) if m in allowed}
    for name, pattern in _CHOICE_RULES:
        for match in re.finditer(pattern, text, flags=re.MULTILINE):
            letter = match.group(1)
            if letter not in allowed or (name == "leading" and alone - {letter}):
                continue  # "A or B" leads with a letter but answers nothing
            return letter, name
    if len(alone) == 1:
        return alone.pop(), "sole-letter"
    return None, "invalid"


_LABELLED_RULES = ("answer-is-zh", "choose-zh", "answer-is-en")


def labelled_letters(text: str, letters: str = "ABCD") -> set[str]:
    """The allowed letters the reply states as its answer (`答案是B`, `选B`, "answer: B")."""
    return {
        match.group(1)
        for name, pattern in _CHOICE_RULES
        if name in _LABELLED_RULES
        for match in re.finditer(pattern, text, flags=re.MULTILINE)
        if match.group(1) in letters
    }


_SET = r"([A-H](?:\s*(?:[,，、;；/&+]|and|和|及|与)?\s*[A-H])*)(?![A-Za-z])"
# Multiple-answer items: the same rules, each reading every letter of the answer.
_CHOICES_RULES: list[tuple[str, str]] = [
    ("bare", rf"^\s*[(（\[【]?\s*{_SET}\s*[)）\]】]?\s*[.。．、]?\s*$"),
    ("answer-is-zh", rf"答案\s*(?:是|为|应为|应该是)?\s*[:：]?\s*[(（\[【]?\s*{_SET}"),
    ("choose-zh", rf"(?:选择|选项|应选|选)\s*[:：]?\s*[(（\[【]?\s*{_SET}"),
    (
        "answer-is-en",
        rf"(?i:the\s+(?:correct\s+)?answers?\s+(?:is|are)|answers?\s*[:：])\s*[(\[]?\s*{_SET}",
    ),
    ("leading", rf"^\s*[(（\[【]?{_SET}[)）\]】.．、:：\s]"),
]


def extract_choices(text: str, letters: str = "ABCD") -> tuple[str | None, str]:
    """The option letters a reply to a multiple-answer item gives (sorted, e.g. `"BD"`).

    The rules of `extract_choice`, each reading all the letters it finds together (`BD`,
    `B、D`, `B和D`, "the answers are A and C"); a letter that is not an option makes the rule
    pass. There is no fallback on letters scattered through the reply: `(None, "invalid")`.
    """
    allowed = set(letters)
    for name, pattern in _CHOICES_RULES:
        for match in re.finditer(pattern, text, flags=re.MULTILINE):
            found = set(re.findall(r"[A-H]", match.group(1)))
            if found and found <= allowed:
                return "".join(sorted(found)), name
    return None, "invalid"


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_LIST_NUMBER = re.compile(r"[.．、)）]\s*\S")
_DATE_AFTER = re.compile(r"\s*[年月日]")
_DATE_BEFORE = re.compile(r"[年月]\s*$")
_DATE_SEPARATED = re.compile(r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}")


_LIST_LINE = re.compile(r"^\s*\d{1,2}\s*[.．、)）]\s*\S", re.MULTILINE)
_LABEL = re.compile(r"(?:得分|分数|评分|score|类别|label)\s*[:：是为]?\s*$", re.IGNORECASE)
_UNIT = re.compile(r"\s*分(?!制)")
_FULL_MARKS = re.compile(r"(?:满分|总分|out of)\s*$", re.IGNORECASE)


def _not_a_value(text: str, match: re.Match[str], listed: bool) -> bool:
    """Whether a number is no value: it numbers a line, or is part of a date or a full mark.

    `1. …`, `2018年10月11`, `满分100`; and, in a numbered list (`listed`), any number without
    a label (`得分：85`, `85分`): `1. 0`, `2. 1`, `3. 2` on their lines count, they score
    nothing.
    """
    start, end = match.span()
    line_start = text.rfind("\n", 0, start) + 1
    if not text[line_start:start].strip() and _LIST_NUMBER.match(text, end):
        return True
    if _DATE_AFTER.match(text, end) or _DATE_BEFORE.search(text, 0, start):
        return True
    if any(d.start() <= start and end <= d.end() for d in _DATE_SEPARATED.finditer(text)):
        return True
    if _FULL_MARKS.search(text, 0, start):
        return True
    labelled = _LABEL.search(text, 0, start) or _UNIT.match(text, end)
    return listed and not labelled


def _first_number(text: str, lo: float, hi: float) -> float | None:
    labelled = re.search(
        r"(?:得分|分数|评分|score|类别|label)\s*[:：是为]?\s*(-?\d+(?:\.\d+)?)",
        text,
        flags=re.IGNORECASE,
    )
    candidates = [labelled] if labelled else []
    candidates += list(_NUMBER.finditer(text))
    listed = len(_LIST_LINE.findall(text)) >= 2
    for match in candidates:
        span = match.span(match.lastindex or 0)
        number = _NUMBER.fullmatch(text, *span)
        if number is None or _not_a_value(text, number, listed):
            continue
        value = float(number.group(0))
        if lo <= value <= hi:
            return value
    return None


def extract_score(text: str, lo: float = 0, hi: float = 100) -> float | None:
    """An essay score: a labelled number (`得分：85`, "Score: 85/100") or the first in range.

    A number that numbers a line (`1. 2018年10月11`), is part of a date or gives the full
    mark (`满分100`) is no score, nor is one a numbered list holds without a label (lines
    `1. 0`, `2. 1`, `3. 2`: the list counted).
    """
    return _first_number(text, lo, hi)


def extract_label(text: str, lo: int = 1, hi: int = 9) -> int | None:
    """A class label: a labelled integer or the first in range, not a line's number or a date's."""
    value = _first_number(text, lo, hi)
    return int(value) if value is not None and value == int(value) else None


class Rouge(NamedTuple):
    """ROUGE-L precision, recall and F-measure."""

    p: float
    r: float
    f: float


def is_chinese(text: str) -> bool:
    """True when CJK characters make up at least a third of the non-space characters."""
    chars = [c for c in text if not c.isspace()]
    return bool(chars) and sum(1 for c in chars if _CJK.match(c)) * 3 >= len(chars)


def _tokens(text: str, chinese: bool) -> list[str]:
    if chinese:
        return [c for c in text if not c.isspace()]
    return text.lower().split()


def rouge_l(candidate: str, reference: str, chinese: bool | None = None) -> Rouge:
    """ROUGE-L on the longest common subsequence; characters for Chinese, words otherwise."""
    if chinese is None:
        chinese = is_chinese(reference) or is_chinese(candidate)
    return Rouge(*lcs_overlap(_tokens(candidate, chinese), _tokens(reference, chinese)))


def rmse(predicted: Sequence[float], gold: Sequence[float]) -> float:
    """Root mean squared error."""
    if not gold:
        return 0.0
    return math.sqrt(sum((p - g) ** 2 for p, g in zip(predicted, gold, strict=True)) / len(gold))
