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

Answers that are text (a correction, a translation, a phrase, an essay) only count refusals
and hedges in their first line, and none where the reply mostly copies the item's own text: a
student's sentence may well say "I don't know".
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
_TOKEN_REFUSALS = [r"不知道", r"不清楚", r"\bI (?:don't|do not) know\b", r"\bno idea\b"]
_APOLOGIES = [r"对不起", r"抱歉", r"\bsorry\b", r"\bI apologi[sz]e\b"]


_KINDS = {
    "refusal": _STRONG_REFUSALS,
    "hedge": _STRONG_HEDGES,
    "unknowing": _TOKEN_REFUSALS,
    "apology": _APOLOGIES,
}
_PHRASES = re.compile(
    "|".join(
        f"(?P<{kind}>{'|'.join(f'(?:{p})' for p in found)})" for kind, found in _KINDS.items()
    ),
    re.IGNORECASE,
)
"""Every phrase of every kind, in one pass over a reply."""


def _said(text: str, prompt: Prompt | None) -> set[str]:
    """The kinds of phrase `text` holds where the prompt does not hold the same words."""
    kinds = set()
    for match in _PHRASES.finditer(text):
        if prompt is None or match.group(0).lower() not in prompt.lowered:
            kinds.add(str(match.lastgroup))
    return kinds


def screen(text: str, prompt: Prompt | None, free_text: bool = False) -> str | None:
    """`refusal` or `hedge` when the reply declines or wavers, else None.

    `free_text`: the answer is text, so only its first line counts.
    """
    if free_text:
        text = text.split("\n", 1)[0]
    said = _said(text, prompt)
    if "refusal" in said:
        return REFUSAL
    if "hedge" in said:
        return HEDGE
    if not free_text and "unknowing" in said:
        return REFUSAL
    return None


def apologises(text: str, prompt: Prompt | None) -> bool:
    """An apology or "I don't know": the reason for a reply that answers nothing."""
    return bool(_said(text, prompt) & {"apology", "unknowing"})
