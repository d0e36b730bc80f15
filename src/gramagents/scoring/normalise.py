r"""The one normalisation every reply gets before any chain reads it.

- Unicode NFKC: full-width letters, digits and punctuation become ASCII (`Ｔ` is `T`,
  `答案：Ｂ` is `答案:B`, `１０６４` is `1064`), compatibility forms their plain letters.
- Reasoning blocks go: a reply in `<think>…</think>` form (or `<thinking>`, `<reasoning>`)
  is read after the block; a block that never closes held no answer, so nothing is left.
- Markdown that only decorates goes: `*` emphasis markers, code fences, `\boxed{X}`.
- Zero-width characters go, line ends become `\n`, spaces at the ends of lines go.

Prompts are normalised the same way (without the markdown and reasoning steps) before a reply
is compared with them, so an echo matches whatever widths either side used.
"""

from __future__ import annotations

import re
import unicodedata

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_OPEN_REASONING = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE_REASONING = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```[\w+-]*\s*$", re.MULTILINE)
_EMPHASIS = re.compile(r"\*+")
_BOXED = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_LINE_END = re.compile(r"\r\n?|\u2028|\u2029|\x85")
_TRAILING = re.compile(r"[ \t]+$", re.MULTILINE)


def nfkc(text: str) -> str:
    """NFKC without invisible characters, with Unix line ends and no spaces ending lines."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    if "\r" in text or not text.isascii():
        text = _LINE_END.sub("\n", text)
    return _TRAILING.sub("", text) if " \n" in text or "\t\n" in text else text


def strip_reasoning(text: str) -> str:
    """What follows the model's reasoning: closed blocks removed, an unclosed one is all.

    A reply whose server dropped the opening tag (`…</think>T`) is read after the last
    closing tag.
    """
    if "<" not in text:
        return text
    text = _REASONING.sub("", text)
    opened = _OPEN_REASONING.search(text)
    if opened is not None:
        return text[: opened.start()]  # reasoning cut off: what came before it, if anything
    closes = list(_CLOSE_REASONING.finditer(text))
    return text[closes[-1].end() :] if closes else text


def strip_markdown(text: str) -> str:
    """Without code fences and `*` emphasis markers, and with a boxed answer unboxed."""
    if "\\boxed" in text:
        text = _BOXED.sub(r"\1", text)
    if "```" in text:
        text = _FENCE.sub("", text)
    return _EMPHASIS.sub("", text) if "*" in text else text


def normalise_reply(text: str) -> str:
    """A reply as every chain reads it (see the module docstring)."""
    return strip_markdown(strip_reasoning(nfkc(text))).strip()
