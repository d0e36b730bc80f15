"""T/F answers: one letter (SINGLE), or a sequence of letters (BATCH, CON-INS).

A sequence is read as the released CPG-EVAL scoring reads it: the T/F letters of the reply in
order, cut to the number of sub-questions; a missing position counts as wrong. Before that,
quantified answers (`全部是F`, `都包含`, "all T", "none of them contain it", `除了5都是T`)
fill every position, and numbered answers may give ranges (`1-3 T, 4-9 F`, `1到3是T`).

A sequence is read only from letters that stand as answers, each ending its clause: a
letter in the middle of a sentence of explanation (`可以用T来替换`, "T stands for true") is a
word of that sentence, never a position of the sequence. One letter given for a batch of
several sentences (`F`, "The answer is: F") answers none of them (`no-answer`); only a
quantified answer (`全部是F`, "all F", `都是F`) fills every position.

Both letters offered for one position (`T或F`, "T or F") is a hedge; two answers that
contradict each other (`答案：T … 答案：F`, position 3 given T and F) a conflict. Neither is
resolved by guessing. Question and condition forms (`是否包含`, `如果包含`, "if it does") are
the prompt's words, never a statement of the answer, and `对不起` is no `对`.
"""

from __future__ import annotations

import re

from .extract import CONFLICT, HEDGE, NO_ANSWER, Invalid, Meta, chain

_WRAPPING = " \t\r\n\"'“”‘’`*_[]()（）【】「」.。,，:：;；!！?？"
_TF_WORDS = {"t": "T", "f": "F", "true": "T", "false": "F"}
_LABELLED = re.compile(
    r"(?:答案|回答|判断|结果|输出|answer|output|result)\s*(?:是|为|应为|:|is)?\s*:?\s*"
    r"[\"'“”‘’*\[【(]*\s*(T|F|true|false)(?![A-Za-z])",
    re.IGNORECASE,
)
_STANDALONE = re.compile(r"(?<![A-Za-z0-9])([TF])(?![A-Za-z0-9])")
_ALTERNATIVES = re.compile(
    r"(?<![A-Za-z0-9])([TF]|(?i:true|false))\s*(?:或者?|或是|还是|也可能是?|(?i:or)|/|\|)\s*"
    r"(?:是\s*)?([TF]|(?i:true|false))(?![A-Za-z0-9])"
)
_ANSWER_WORD = re.compile(r"(?<![A-Za-z0-9])([TF]|(?i:true|false))(?![A-Za-z0-9])")
_LEADING = re.compile(r"^[\W_]*(T|F|true|false)(?![A-Za-z0-9])", re.IGNORECASE)
_DOES_NOT_CONTAIN = re.compile(
    r"(?<!if it )(does not|doesn't|do not|don't) contain (the|this) grammar point"
    r"|(?<!是否)(?<!如果)(?<!若)不包含(该|这个|此)?语法点",
    re.IGNORECASE,
)
_CONTAINS = re.compile(
    r"(?<!if it )(?<!if a sentence )\bcontains (the|this) grammar point"
    r"|(?<!不)(?<!是否)(?<!如果)(?<!若)(?<!是不是)包含(该|这个|此)?语法点",
    re.IGNORECASE,
)
_YES = re.compile(
    r"^\W*(?:(?:答案|回答)\s*[:是为]?\s*)?(yes|是的|是(?![否不])|包含|对(?!不起))(?![A-Za-z])",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^\W*(?:(?:答案|回答)\s*[:是为]?\s*)?(no|不是|否|不包含|不对)(?![A-Za-z])", re.IGNORECASE
)

_CLAUSE_WORDS = "答案 回答 认为 觉得 应该 所以 因此 句子 句 号 它们 其余 其他 其它 剩下的".split()
_CLAUSE = "(?:^|(?<=[\\W_])|" + "|".join(f"(?<={w})" for w in _CLAUSE_WORDS) + ")"
"""A quantified answer starts a clause (`每次读都错` is part of a sentence, not an answer)."""
_ALL = (
    r"(?:全部|全都|都|均|所有(?:的)?(?:句子)?都?|每(?:个|一个|句)(?:句子)?都)"
    r"\s*(?:是|为|选|判断为|回答)?\s*"
)
_ALL_T = re.compile(
    rf"{_CLAUSE}{_ALL}(?:T(?![A-Za-z0-9])|true|对|正确|包含|含有)"
    r"|\ball (?:of them |the sentences |sentences |answers )?(?:are |is )?(?:T|true)\b"
    r"|\b(?:all (?:of them |the sentences |sentences )?|every sentence |each sentence )"
    r"contains? (?:it|the grammar point|this grammar point)",
    re.IGNORECASE,
)
_ALL_F = re.compile(
    rf"{_CLAUSE}{_ALL}(?:F(?![A-Za-z0-9])|false|错|不对|不正确|不包含|没有包含|不含)"
    rf"|{_CLAUSE}(?:没有一个|一个都不|一句都不|都没有)(?:句子)?(?:包含|含有)"
    r"|\ball (?:of them |the sentences |sentences |answers )?(?:are |is )?(?:F|false)\b"
    r"|\b(?:none of them|none of the sentences|no sentence|none) (?:contains?|has|uses)\b",
    re.IGNORECASE,
)
_EXCEPT = re.compile(
    r"(?:除了?|但是?|except(?: for)?|but)\s*(?:第|sentences?|no\.?|numbers?)?\s*"
    r"(\d{1,2}(?:\s*(?:[,、和及与/]|and)\s*(?:第)?\s*\d{1,2})*)",
    re.IGNORECASE,
)


def _both(text: str) -> Invalid | None:
    """A hedge or a conflict when the reply gives both letters, else None."""
    if _ALTERNATIVES.search(text):
        return Invalid(HEDGE)
    if {word[0].upper() for word in _ANSWER_WORD.findall(text)} == {"T", "F"}:
        return Invalid(CONFLICT)
    return None


def _exact(text: str, meta: Meta) -> str | None:
    return _TF_WORDS.get(text.strip(_WRAPPING).lower())


def _labelled(text: str, meta: Meta) -> str | Invalid | None:
    found = {m.group(1)[0].upper() for m in _LABELLED.finditer(text)}
    if len(found) > 1:
        return Invalid(CONFLICT)
    return (_both(text) or found.pop()) if found else None


def _leading(text: str, meta: Meta) -> str | Invalid | None:
    match = _LEADING.match(text)
    if match is None:
        return None
    word = match.group(1)
    if len(word) == 1 and word.islower():
        return None  # a sentence starting with "t" or "f" is not an answer
    return _both(text) or word[0].upper()


def _sole_letter(text: str, meta: Meta) -> str | Invalid | None:
    found = set(_STANDALONE.findall(text))
    if not found:
        return None
    return _both(text) or found.pop()


def _quantified(text: str, meta: Meta) -> str | None:
    positive, negative = bool(_ALL_T.search(text)), bool(_ALL_F.search(text))
    if positive == negative:
        return None
    return "T" if positive else "F"


def _statement(text: str, meta: Meta) -> str | None:
    negative = bool(_DOES_NOT_CONTAIN.search(text))
    positive = bool(_CONTAINS.search(text))
    if negative == positive:
        return None
    return "F" if negative else "T"


def _yes_no(text: str, meta: Meta) -> str | None:
    if _NO.match(text):
        return "F"
    if _YES.match(text):
        return "T"
    return None


chain(
    "tf",
    [
        ("exact", _exact),
        ("labelled", _labelled),
        ("leading", _leading),
        ("sole-letter", _sole_letter),
        ("quantified", _quantified),
        ("statement", _statement),
        ("yes-no", _yes_no),
    ],
)


# --- sequences --------------------------------------------------------------------------------

_SEPARATORS = re.compile(r"[\s,，、;；|/*`\-]+")
_NUMBERED = re.compile(
    r"(?:^|(?<=[\s,，;；(（]))(?:第\s*)?(\d{1,2})(?:\s*(?:-|–|~|到|至|to)\s*(\d{1,2}))?"
    r"\s*(?:[.．、:：)）]|号|句)?\s*(?:[:：]|是|为|=|are|is)?\s*\**\s*([TF])(?![A-Za-z])",
    re.IGNORECASE,
)


def _size(meta: Meta) -> int | None:
    size = meta.get("n")
    return size if isinstance(size, int) and size > 0 else None


def _cut(letters: str, meta: Meta) -> str | Invalid:
    """The letters cut to the batch's size; one letter for several sentences answers none."""
    size = _size(meta)
    if size is not None and size > 1 and len(letters) == 1:
        return Invalid(NO_ANSWER)
    return letters[:size] if size else letters


def _compact(text: str, meta: Meta) -> str | Invalid | None:
    letters = _SEPARATORS.sub("", text.strip(_WRAPPING))
    if letters and set(letters) <= {"T", "F"}:
        return _cut(letters, meta)
    return None


_RUN = re.compile(r"(?<![A-Za-z0-9])[TF](?:[\s,，、;；|/]*[TF])+(?![A-Za-z0-9])")


def _run(text: str, meta: Meta) -> str | Invalid | None:
    """One run of letters in a sentence (`答案：TTFTTTTTT。`); two runs that differ conflict."""
    runs = {re.sub(r"[^TF]", "", m.group(0)) for m in _RUN.finditer(text)}
    if len(runs) > 1:
        return Invalid(CONFLICT)
    return _cut(runs.pop(), meta) if runs else None


def _all_but(text: str, meta: Meta) -> str | None:
    """`全部是F`, "all T", `除了5都是T` (and `都是T，除了第5句`): every position filled."""
    size, letter = _size(meta), _quantified(text, meta)
    if size is None or letter is None:
        return None
    other = "F" if letter == "T" else "T"
    answers = [letter] * size
    for clause in _EXCEPT.finditer(text):
        for number in re.findall(r"\d{1,2}", clause.group(1)):
            if 1 <= int(number) <= size:
                answers[int(number) - 1] = other
    return "".join(answers)


def _numbered(text: str, meta: Meta) -> str | Invalid | None:
    answers: dict[int, str] = {}
    for match in _NUMBERED.finditer(text):
        first = int(match.group(1))
        last = int(match.group(2) or first)
        for position in range(first, last + 1):
            if answers.setdefault(position, match.group(3).upper()) != match.group(3).upper():
                return Invalid(CONFLICT)
    if not answers:
        return None
    if _ALTERNATIVES.search(text):
        return Invalid(HEDGE)
    last = _size(meta) or max(answers)
    return "".join(answers.get(i, "?") for i in range(1, last + 1))


_WORD = re.compile(r"[^\W\d_]")
"""A letter of a word (Latin or Chinese): what stands beside a T or F inside a sentence."""


def _ends_clause(text: str, end: int) -> bool:
    """Whether the letter ending at `end` ends its clause, as an answer does.

    `1. T`, `句子2：T。`, "sentence two is F." end theirs; in `用T来替换` and "T stands for
    true" the letter is a word in the middle of a sentence of explanation.
    """
    after = text[end:].lstrip(" \t")
    return not (after and _WORD.match(after[0]))


def _letters(text: str, meta: Meta) -> str | Invalid | None:
    if _ALTERNATIVES.search(text):
        return Invalid(HEDGE)
    letters = "".join(m.group(1) for m in _STANDALONE.finditer(text) if _ends_clause(text, m.end()))
    return _cut(letters, meta) if letters else None


chain(
    "tf-sequence",
    [
        ("compact", _compact),
        ("run", _run),
        ("quantified", _all_but),
        ("numbered", _numbered),
        ("letters", _letters),
    ],
)
