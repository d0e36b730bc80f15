"""Refusals and hedges: replies that decline to answer, or offer more than one answer.

A phrase only counts where the model said it: one that also occurs in the prompt (an option
reading `无法确定`, a student's sentence with "I'm sorry") is the prompt's, not a refusal.

- `refusal`: the model says it cannot or will not answer (`无法判断`, `对不起，我无法回答`,
  "I cannot determine", "As an AI"). Invalid whatever else the reply holds: a refusal that
  names a letter on the way ("I can't tell whether it is T") answers nothing.
- `hedge`: the model offers more than one answer, or says it is unsure (`不确定`,
  `可能是T，也可能是F`, "it could be either", "I'm not sure"). Invalid likewise.
- An apology or "I don't know" with no answer after it (`对不起。`, `我不知道`) is a refusal
  too, but only when no rule reads an answer: `抱歉，答案是T` is T.

Answers that are text (a correction, a translation, a phrase, an essay) count no hedges, and
only refusals in their first line said in the model's own voice (`我无法回答`, "I cannot
translate this"), none where the reply mostly copies the item's own text: a student's
sentence may well say "I don't know", an answer about a poem `作者难以判断`.
"""

from __future__ import annotations

import re

from .echo import Prompt

REFUSAL = "refusal"
HEDGE = "hedge"

_STRONG_REFUSALS = [
    r"(?:无法|不能|没法|难以|不好)(?:准确)?(?:判断|确定|回答|给出|作答|决定|选择|评分|打分|识别)",
    r"(?:我|本人)?(?:拒绝|不便)回答",
    r"作为(?:一个)?(?:AI|人工智能|语言模型)",
    r"\b(?:I|we)\s*(?:cannot|can't|can not|am unable to|'m unable to|am not able to)\s+"
    r"(?:determine|decide|answer|tell|say|judge|provide|help|assist|complete|evaluate|identify"
    r"|choose|correct|translate)",
    r"\b(?:cannot|can't|can not) be (?:determined|decided|answered|told)",
    r"\bunable to (?:determine|decide|answer|tell|judge)",
    r"\bas an? (?:AI|language model)",
    r"\bI (?:won't|will not) (?:answer|guess)",
]
_STRONG_HEDGES = [
    r"不确定",
    r"说不准|说不好|不好说",
    r"也可能是",
    r"两者都(?:有可能|可以|对)",
    r"\b(?:I'm|I am) not (?:sure|certain)",
    r"\b(?:could|might|may) be either\b",
    r"\beither (?:one|way|answer)\b",
    r"\bhard to (?:say|tell)\b",
    r"\bdifficult to (?:say|tell|determine)\b",
    r"\bboth (?:answers |sentences |options )?(?:are|could be|seem) "
    r"(?:possible|correct|right|acceptable|grammatical)",
]
_TEXT_REFUSALS = [
    r"^\W*(?:(?:很)?抱歉|对不起|不好意思)?\W*(?:我|本人)?(?:无法|不能|没法)(?:准确)?"
    r"(?:判断|确定|回答|给出|作答|评分|打分|翻译|改正|修改|完成)",
    r"(?:我|本人)(?:无法|不能|没法|拒绝|不便)(?:准确)?(?:判断|确定|回答|给出|作答|评分|打分|翻译"
    r"|改正|修改|完成)",
    *_STRONG_REFUSALS[2:],
]
"""Refusals where the answer is text: the model's own words, at the start or in the first
person (`作者难以判断自己的心情` is an answer about a poem)."""
_TOKEN_REFUSALS = [r"不知道", r"不清楚", r"\bI (?:don't|do not) know\b", r"\bno idea\b"]
_APOLOGIES = [r"对不起", r"抱歉", r"\bsorry\b", r"\bI apologi[sz]e\b"]


_KINDS = {
    "refusal": _STRONG_REFUSALS,
    "hedge": _STRONG_HEDGES,
    "unknowing": _TOKEN_REFUSALS,
    "apology": _APOLOGIES,
}


def _compile(kinds: dict[str, list[str]]) -> re.Pattern[str]:
    """One pattern for every phrase of every kind (each a named group), one pass a reply."""
    groups = (f"(?P<{kind}>{'|'.join(f'(?:{p})' for p in found)})" for kind, found in kinds.items())
    return re.compile("|".join(groups), re.IGNORECASE)


_PHRASES = _compile(_KINDS)
_TEXT_PHRASES = _compile({"refusal": _TEXT_REFUSALS})


def _said(pattern: re.Pattern[str], text: str, prompt: Prompt | None) -> set[str]:
    """The kinds of phrase `text` holds where the prompt does not hold the same words."""
    kinds = set()
    for match in pattern.finditer(text):
        if prompt is None or match.group(0).lower() not in prompt.lowered:
            kinds.add(str(match.lastgroup))
    return kinds


def screen(text: str, prompt: Prompt | None, free_text: bool = False) -> str | None:
    """`refusal` or `hedge` when the reply declines or wavers, else None.

    `free_text`: the answer is text: only a refusal in its first line counts, none of the
    hedges (an open answer may well say `不确定`).
    """
    if free_text:
        said = _said(_TEXT_PHRASES, text.split("\n", 1)[0], prompt)
        return REFUSAL if said else None
    said = _said(_PHRASES, text, prompt)
    if "refusal" in said:
        return REFUSAL
    if "hedge" in said:
        return HEDGE
    if "unknowing" in said:
        return REFUSAL
    return None


def apologises(text: str, prompt: Prompt | None) -> bool:
    """An apology or "I don't know": the reason for a reply that answers nothing."""
    return bool(_said(_PHRASES, text, prompt) & {"apology", "unknowing"})
