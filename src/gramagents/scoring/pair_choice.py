"""Minimal pairs asked as a forced choice: which of two numbered sentences is acceptable.

A pair is shown twice, the grammatical sentence first (`good-first`) and second
(`good-second`), as sentences `1` and `2` (metalinguistic prompting, as Hu & Levy 2023 compare
it with log-probabilities). A reply is read the way every reply is (`extract.py`: normalised,
refusals and hedges screened out, text copied from the prompt hidden, each sentence it repeats
replaced by that sentence's mark), and then by the chain `pair-choice`:

- `exact`: the reply is the number alone (`1`, `２`, `"2".`);
- `both`: both sentences called acceptable (`都对`, "both are correct"): a hedge;
- `after-list`: a reply that gives back lines of the prompt's numbered list (`1. 他把书看完了。`,
  or the line a little changed, `1. 他把门关上！`) is read after them, as `named` reads; with no
  choice there, it is an echo (a line of the list given back names no choice);
- `named`: the sentences the reply names: by number (`1`, `答案是2`, `句子1`, `第二句`,
  "Sentence 2", "the first one"), or by giving the sentence itself (not where it is only the
  start or end of the other, longer sentence: `他把门关` inside `他把门关上！`). A mention
  followed in its clause by a negation (`句子2不正确`, "sentence 2 is not") or preceded by
  one (`不是1`) denies that sentence. One sentence named is the answer; two are a hedge when
  offered as alternatives (`1还是2`, "1 or 2"), else a conflict, and so is one sentence both
  named and denied. Of two sentences, denying one alone chooses the other (`答案不是1`: 2).

The pair's scores (metric `pair-choice`), from the sentence chosen in each order:

- `acc`: the share of its two presentations answered right (the task's mean is the share of
  all presentations; chance 0.5);
- `acc_strict`: 1 when both orders are right (chance 0.25);
- `acc_good_first`, `acc_good_second`: each order's (chance 0.5 each);
- `consistency`: 1 when both orders chose the same sentence (chance 0.5). A model that always
  answers by position (`1` every time) scores 0: right in one order, wrong in the other.

An order whose reply cannot be read counts as wrong and as not consistent; the pair is then
invalid, with the first unread order's reason.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from difflib import SequenceMatcher
from typing import Any

from .extract import CONFLICT, ECHO, HEDGE, INVALID, Extraction, Invalid, Meta, chain
from .metrics import ItemScore, metric
from .normalise import nfkc
from .options import MARK_BASE, option_pairs
from .reading import HIDDEN

ORDERS = ("good-first", "good-second")
"""The two presentations of a pair: the grammatical sentence shown first, then second."""
KEYS = ("1", "2")
"""How the prompt numbers the two sentences it shows."""

_WRAPPING = " \t\r\n\"'“”‘’`*_[]()（）【】「」.。,，:：;；!！?？"
_ORDINALS = {"1": "1", "2": "2", "一": "1", "二": "2", "first": "1", "second": "2"}
_NAMED = re.compile(
    r"(?:答案|回答|选择|选项|应选|选|answer|option|choice)\s*(?:是|为|应为|应该是|is|:)?\s*:?\s*"
    r"[\"'“”(（【\[]*\s*([12])(?![0-9])"
    r"|(?:句子|句|sentence|number|no\.)\s*(?:#\s*)?([12一二])(?![0-9])"
    r"|第\s*([12一二])\s*(?:句|个|种|项|条)"
    r"|\b(?:the\s+)?(first|second)\s+(?:sentence|one|option)\b"
    r"|(?<![A-Za-z0-9.])([12])(?![A-Za-z0-9]|\.[0-9])",
    re.IGNORECASE,
)
_NEGATED_AFTER = re.compile(
    r"\b(?:not|isn't|is\s+wrong|incorrect|ungrammatical|unacceptable|wrong)\b"
    r"|不(?!错)|错误|病句|有误|有错",
    re.IGNORECASE,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|不是|而非|并非|并不是)\s*(?:the\s+|句子\s*)?$", re.IGNORECASE
)
_CLAUSE_END = re.compile(r"[。;；!！?？\n,，]|(?<![0-9])\.")
_OR = re.compile(r"^\s*(?:或者?|或是|还是|\bor\b|/)\s*$", re.IGNORECASE)
_BOTH = re.compile(
    r"(?:两个|两句|两者|它们|二者)?都(?:对|正确|可以|合乎语法|符合语法|能接受|可接受)"
    r"|\bboth\b[^.\n]*\b(?:correct|acceptable|grammatical|fine|right)\b",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^\W*([12])\s*[.．、:：)）]?\s*")
SAME_LINE = 0.8
"""How alike (difflib's ratio of their letters) a numbered line and the sentence of that number
are when the line gives the sentence back."""


def _key_of_mark(char: str) -> str | None:
    index = ord(char) - MARK_BASE
    return KEYS[index] if 0 <= index < len(KEYS) else None


def _exact(text: str, meta: Meta) -> str | None:
    stripped = text.strip(_WRAPPING)
    return stripped if stripped in KEYS else None


def _listed(line: str, meta: Meta) -> bool:
    """Whether a line gives back a line of the prompt's list (`2. 他把书看完了。`).

    Its number, then (nearly) a sentence of the pair: the two differ by a word, so a line that
    gives either back, or one changed a little (`1. 他把门关上！`), is the list repeated, not a
    choice. A sentence the length limit cut off (hidden as part of no option) counts too.
    """
    found = _NUMBERED.match(line)
    if found is None:
        return False
    rest = line[found.end() :]
    if HIDDEN in rest:
        return True
    texts = dict(option_pairs(meta))
    shown = "".join(texts.get(_key_of_mark(ch) or "", ch) for ch in rest)
    wanted = _letters(texts.get(found.group(1), ""))
    return bool(wanted) and SequenceMatcher(None, _letters(shown), wanted).ratio() >= SAME_LINE


def _after_list(text: str, meta: Meta) -> str | Invalid | None:
    """A reply that gives back the prompt's numbered lines is read after them.

    Models often repeat the list before answering (`1. …`, `2. …`, then `The answer is 2.`):
    the repeated lines name no choice; what follows them does. With nothing there that names
    one, the reply is an echo.
    """
    lines = text.split("\n")
    rest = [line for line in lines if not _listed(line, meta)]
    if len(rest) == len(lines):
        return None
    found = _named("\n".join(rest), meta)
    return Invalid(ECHO) if found is None else found


def _both(text: str, meta: Meta) -> Invalid | None:
    """Both sentences called acceptable (`都对`, "both are fine"): a hedge, not a choice."""
    return Invalid(HEDGE) if _BOTH.search(text) else None


def _letters(text: str) -> str:
    """The letters and digits of a text, as options are matched (`options.py`)."""
    return "".join(ch for ch in nfkc(text) if unicodedata.category(ch)[0] in "LN").casefold()


def _inside_other(text: str, at: int, key: str, meta: Meta) -> bool:
    """Whether a sentence found at `at` is the start or end of the other, longer one.

    Minimal pairs often differ by a word at an end (`他把门关。`, `他把门关上了。`): the shorter
    found where the reply goes on as the longer does (`他把门关上！`) names neither.
    """
    texts = {key: _letters(text) for key, text in option_pairs(meta)}
    mine, other = texts.get(key, ""), texts.get(KEYS[1 - KEYS.index(key)], "")
    if not mine or len(other) <= len(mine):
        return False
    after = _letters(text[at + 1 :])[:1]
    before = _letters(text[:at])[-1:]
    return (other.startswith(mine) and after == other[len(mine)]) or (
        other.endswith(mine) and before == other[-len(mine) - 1]
    )


def _mentions(text: str, meta: Meta) -> list[tuple[str, int, int]]:
    """(key, start, end) of every sentence the reply names, by number or by its text."""
    found = [
        (_ORDINALS[next(g for g in m.groups() if g).lower()], m.start(), m.end())
        for m in _NAMED.finditer(text)
    ]
    found += [
        (key, at, at + 1)
        for at, char in enumerate(text)
        if (key := _key_of_mark(char)) is not None and not _inside_other(text, at, key, meta)
    ]
    return sorted(found, key=lambda m: m[1])


def _negated(text: str, mentions: list[tuple[str, int, int]], index: int) -> bool:
    """Whether the mention's clause says the sentence is not the acceptable one."""
    key, start, end = mentions[index]
    if _NEGATED_BEFORE.search(text[max(0, start - 12) : start]):
        return True
    stop = len(text)
    later = [m for m in mentions[index + 1 :] if m[0] != key]
    if later:
        stop = later[0][1]
    clause_end = _CLAUSE_END.search(text, end)
    if clause_end is not None and clause_end.start() < stop:
        stop = clause_end.start()
    return _NEGATED_AFTER.search(text[end:stop]) is not None


def _named(text: str, meta: Meta) -> str | Invalid | None:
    """The one sentence the reply names as acceptable (see the module docstring)."""
    mentions = _mentions(text, meta)
    denied = [_negated(text, mentions, i) for i in range(len(mentions))]
    chosen = {m[0] for m, no in zip(mentions, denied, strict=True) if not no}
    refused = {m[0] for m, no in zip(mentions, denied, strict=True) if no}
    if chosen & refused:  # one sentence called acceptable and not
        return Invalid(CONFLICT)
    if len(chosen) == 1:
        return chosen.pop()
    if len(chosen) > 1:
        return Invalid(HEDGE if _offered(text, mentions) else CONFLICT)
    if len(refused) == 1:  # of two sentences, the one not denied
        return KEYS[1 - KEYS.index(refused.pop())]
    return None


def _offered(text: str, mentions: list[tuple[str, int, int]]) -> bool:
    """Whether two different sentences are named as alternatives (`1还是2`, "1 or 2")."""
    return any(
        a[0] != b[0] and _OR.match(text[a[2] : b[1]]) is not None
        for a, b in zip(mentions, mentions[1:], strict=False)
    )


chain(
    "pair-choice",
    [("exact", _exact), ("both", _both), ("after-list", _after_list), ("named", _named)],
)


def order_vars(variables: Mapping[str, Any], order: str) -> dict[str, Any]:
    """The template variables of one presentation: `first` and `second` as shown."""
    good, bad = str(variables["good"]), str(variables["bad"])
    first, second = (good, bad) if order == ORDERS[0] else (bad, good)
    return {"context": "", **variables, "first": first, "second": second}


def order_meta(variables: Mapping[str, Any]) -> dict[str, Any]:
    """What the chain reads of one presentation: its two numbered sentences as options."""
    return {
        "options": [
            {"key": KEYS[0], "text": variables["first"]},
            {"key": KEYS[1], "text": variables["second"]},
        ]
    }


def sentence_chosen(key: str, order: str) -> str:
    """`good` or `bad`: the sentence a number names in a presentation."""
    first = key == KEYS[0]
    return "good" if first == (order == ORDERS[0]) else "bad"


def pair_reading(readings: list[Extraction]) -> Extraction:
    """The pair's answer from its two presentations' readings (in `ORDERS` order).

    Its value is the sentence chosen in each order (None where the reply was not read); it is
    invalid when an order's reply was not read, with that order's reason.
    """
    chosen = [
        None if r.invalid else sentence_chosen(str(r.value), order)
        for r, order in zip(readings, ORDERS, strict=True)
    ]
    unread = [r for r in readings if r.invalid]
    if unread:
        return Extraction(chosen, INVALID, unread[0].reason)
    return Extraction(chosen, "both-orders")


@metric("pair-choice")
def choice_scores(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """`acc`, `acc_strict`, each order's accuracy and `consistency` of one pair."""
    chosen = extraction.value if isinstance(extraction.value, list) else [None, None]
    right = [1.0 if c == "good" else 0.0 for c in chosen]
    same = chosen[0] is not None and chosen[0] == chosen[1]
    return ItemScore(
        {
            "acc": sum(right) / len(right),
            "acc_strict": min(right),
            "acc_good_first": right[0],
            "acc_good_second": right[1],
            "consistency": 1.0 if same else 0.0,
        }
    )
