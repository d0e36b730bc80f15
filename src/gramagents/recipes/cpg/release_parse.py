"""The parts of a released CPG-EVAL question: its sentence or sentences, point label, options.

The released questions are the bank templates filled in (`prompts/cpg/*.zh.md`), with small
variations of layout from file to file (a space after the number or not, trailing spaces);
these patterns read every layout the public files use. Sentences are compared by `sentence_key`,
which ignores the width of punctuation and whitespace (`？` and `?`, a stray space), as the
files write the same sentence both ways.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SINGLE = re.compile(r"^\s*请判断：在句子“(?P<s>.*)”中，是否包含语法点\[(?P<p>.*)\]\?", re.S)
_NUMBERED_HEAD = re.compile(r"如果包含语法点\[(?P<p>.*)\]，回答T。如果不包含，回答F。")
_NUMBERED_LINE = re.compile(r"^\s*(\d{1,2})\.\s?(.*?)\s*$", re.M)
_CHOICE = re.compile(r"^\s*句子“(?P<s>.*)”最适合作为以下哪个语法点的例句", re.S)
LETTER_OPTION = re.compile(r"^\s*([A-Z])[.．、]\s*(.+?)\s*$", re.M)
CODE_OPTION = re.compile(r"^\s*(\d{4})[.．、]\s*(.+?)\s*$", re.M)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Question:
    """What a released question asks about."""

    label: str | None
    """The grammar point named in the question (none in SIM-GRA and CAT-GRA)."""
    sentences: tuple[str, ...]
    """The sentence, or the numbered sentences, as written (stripped)."""
    options: tuple[tuple[str, str], ...] = ()
    """(key, text) of each option of SIM-GRA (letters) and CAT-GRA (codes)."""


def sentence_key(sentence: str) -> str:
    """A sentence as compared across files: NFKC (full- and half-width alike), no whitespace."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", sentence))


def parse(bank: str, question: str) -> Question | None:
    """The parts of a question of `bank`; None when it does not follow the bank's template."""
    if bank.startswith("SINGLE"):
        match = _SINGLE.match(question)
        if not match:
            return None
        return Question(match.group("p").strip(), (match.group("s").strip(),))
    if bank.startswith(("BATCH", "CON-INS")):
        head = _NUMBERED_HEAD.search(question)
        if not head:
            return None
        body = question[head.end() :].split("请使用", 1)[0]
        lines = tuple(text for _, text in _NUMBERED_LINE.findall(body))
        return Question(head.group("p").strip(), lines)
    match = _CHOICE.match(question)
    if not match:
        return None
    pattern = LETTER_OPTION if bank == "SIM-GRA" else CODE_OPTION
    rest = question[match.end() :]
    return Question(None, (match.group("s").strip(),), tuple(pattern.findall(rest)))
