"""Echoes: the parts of a reply that copy the prompt that was sent.

Reply and prompt are compared after normalisation (`normalise.nfkc`) and without whitespace.
A stretch of the reply is *copied* when it lies in a run of at least `COPY_RUN` characters
that also occurs in the prompt (the prompt's system and user messages; worked answers given as
assistant turns are not the prompt's words but answers, so repeating one is no echo). Three
measures follow:

- the reply's *copied share*: its copied characters over all its characters (spaces aside);
- for answers that are text, the share copied from the prompt's *instruction*: the prompt
  with the item's own text (the sentence to correct, the sentence a phrase is taken from)
  cut out, so that an unchanged sentence or a phrase of it is never an echo;
- the instruction's *reproduced share*: how much of the instruction the reply repeats.

The thresholds come from `bench/echo.py`: 164 replies of the embedded model (SmolLM2-135M) to
the example CPG, syntax-QA, EduEval and GEC banks (8 items a task), 656 echoes made from the
same prompts (the user message whole, its first line, its last line, its first half), and the
290 replies of the test corpus with a grader's reading (`tests/data/replies.jsonl`); the
figures are in `bench/RESULTS.md`.

- `COPY_RUN = 8` is the only run length at which the chains read every corpus reply as the
  grader does (4 characters: 4 misread, 6: 1, 10: 1, 12: 3, 16: 5). Shorter runs hide real
  answers (at 4, `The answer is “True` loses its True to the instruction `answer them with
  “True” or “False”`); longer runs miss short instructions (Chinese ones are short:
  `请使用T或F回答` is 9 characters; at 12, an echoed `如果不包含，请仅回答F` reads as F, and
  echoes read as answers go from 24 to 40 of 656). The 24 left at 8 were all an option's line
  given back (`E. 能愿动词：能`); such a line is now an echo by its form
  (`options.option_lines_echoed`), whatever its copied runs.
- `ECHO_SHARE = 0.5` only names the reason of a token reply no rule reads: of the embedded
  model's 73 such replies, the 49 with half or more copied give the prompt's sentences back
  (the lowest, 0.51, a comment repeating them), the other 24 copy 0.29 or less.
- `ANSWER_ECHO_SHARE = 0.8`: of the text answers the chains read from the embedded model's
  replies, those that answer copy 0.25 of the instruction or less, and the four that copy
  more (0.96 to 1.0) are a question restated and instruction lines, rightly skipped; every
  echo's answer that copies half or more copies all of it. Answers that restate most of a
  short question (`杜甫《春望》中“感时花溅泪，恨别鸟惊心”的表达效果是：…`, 0.56) stay
  answers below 0.8.
- `INSTRUCTION_SHARE = 0.5`: a correction's whole prompt echoed repeats all of its
  instruction (1.0); a correction after the instruction's first line repeats 0.14 of it.

Runs of `COPY_RUN` characters miss what is short: a sentence of six characters given back
(`你想去哪儿旅`, cut by the length limit) copies no run, and sentences given back under other
numbers (`1. 你会做饭吗？` where the prompt has `3. 你会做饭吗？`) copy only parts of runs. So
the reason of a token reply no rule reads also counts its *pieces* (`pieces_copied`: the
stretches between line ends, sentence and clause punctuation and quotes, without their list
numbers) that the prompt holds whole: the same behaviour, a sentence given back, is an echo
whatever the length of the item's sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .normalise import nfkc

COPY_RUN = 8
"""Characters (spaces aside) a copied run has at least."""
ECHO_SHARE = 0.5
"""A reply with at least this share copied, from which no rule reads an answer, is an echo
(rather than `no-answer`)."""
ANSWER_ECHO_SHARE = 0.8
"""An answer that is text, with at least this share copied from the instruction, is an echo."""
INSTRUCTION_SHARE = 0.5
"""A reply that repeats at least this share of the instruction echoes it whole."""


def squeeze(text: str) -> tuple[str, list[int]]:
    """`text` without whitespace, and where each of its characters was in `text`."""
    positions = [i for i, ch in enumerate(text) if not ch.isspace()]
    return "".join(text[i] for i in positions), positions


def prompt_text(prompt: str | Sequence[Any]) -> str:
    """The prompt's words: a string, or the contents of its system and user messages."""
    if isinstance(prompt, str):
        return prompt
    parts = []
    for message in prompt:
        role = message.get("role") if isinstance(message, Mapping) else message.role
        content = message.get("content") if isinstance(message, Mapping) else message.content
        if role != "assistant" and isinstance(content, str):
            parts.append(content)
    return "\n".join(parts)


def own_texts(meta: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """The item's own text under `keys` of its metadata (strings, or lists of strings)."""
    found: list[str] = []
    for key in keys:
        value = meta.get(key)
        values = value if isinstance(value, list) else [value]
        found += [v for v in values if isinstance(v, str) and v.strip()]
    return found


@dataclass
class Prompt:
    """A prompt as replies are compared with it.

    Each measure is worked out when first asked for: most replies are too short to copy
    anything, and their prompts are never looked at.
    """

    given: str | Sequence[Any]
    """The prompt string, or its chat messages."""
    own_given: list[str] = field(default_factory=list)
    """The item's own text, which an answer may copy."""

    @cached_property
    def text(self) -> str:
        """The prompt's words, normalised."""
        return nfkc(prompt_text(self.given))

    @cached_property
    def own(self) -> list[str]:
        """The item's own text, normalised."""
        return [nfkc(t) for t in self.own_given]

    @cached_property
    def lines(self) -> frozenset[str]:
        """Its lines that hold more than the item's own text, as `line_key` gives them."""
        own = {line_key(t) for t in self.own}
        found = (line_key(line) for line in self.text.splitlines())
        return frozenset(line for line in found if line and line not in own)

    @cached_property
    def lowered(self) -> str:
        """In lower case (for phrase look-ups)."""
        return self.text.lower()

    @cached_property
    def squeezed(self) -> str:
        """Without whitespace."""
        return "".join(self.text.split())

    @cached_property
    def instruction(self) -> str:
        """Without whitespace and without the item's own text."""
        squeezed = self.squeezed
        for text in sorted(self.own, key=len, reverse=True):
            own = "".join(text.split())
            if own:
                squeezed = squeezed.replace(own, "\x00")
        return squeezed

    @cached_property
    def own_squeezed(self) -> str:
        """The item's own texts without whitespace, apart."""
        return "\x00".join("".join(t.split()) for t in self.own)


def line_key(text: str) -> str:
    """A line as lines are compared: no whitespace, no closing punctuation or quotes."""
    return "".join(text.split()).rstrip(".,;:!?。，；：！？\"'”’」』")


def copied(text: str, found: str, unless: str = "") -> bytearray:
    """Per character of `text`, 1 where it lies in a run that `found` holds (and `unless` not).

    `found` and `unless` are texts without whitespace (a NUL keeps their parts apart); a run
    is looked up in them by substring search, which costs less than a set of their runs for
    the short replies most models give.
    """
    squeezed, positions = squeeze(text)
    size = COPY_RUN
    mask = bytearray(len(text))
    covered = 0  # squeezed positions before this one are marked already
    for start in range(len(squeezed) - size + 1):
        run = squeezed[start : start + size]
        if run in found and run not in unless:
            for j in range(max(start, covered), start + size):
                mask[positions[j]] = 1
            covered = start + size
    return mask


_PIECE = re.compile(r"[^\n。！？!?；;，,、…\"“”「」『』]+")
_LIST_NUMBER = re.compile(r"^\s*(?:\(?\d{1,2}[.．、)）:：]|[（(]\d{1,2}[)）])\s*")
_SENTENCE_STOP = re.compile(r"\.(?=\s|$)")
PIECE_WEIGHT = 4
"""How much text a piece needs to count (a Latin letter or digit weighs 1, any other 2): a
word or two of Chinese, four letters of English."""


def weight(text: str) -> int:
    """How much text `text` is: 1 a Latin letter or digit, 2 any other letter (Chinese)."""
    return sum(1 if ch.isascii() else 2 for ch in text if ch.isalnum())


def pieces_copied(text: str, prompt: Prompt) -> bytearray:
    """Per character of `text`, 1 where it lies in a piece the prompt holds whole.

    Pieces are the stretches between line ends, sentence and clause punctuation and quotes
    (a full stop ends one where a space or the end follows it), each without its list number
    (`1. `, `（3）`), of at least `PIECE_WEIGHT`; the number of a piece the prompt holds is
    marked with it.
    """
    mask = bytearray(len(text))
    cut = _SENTENCE_STOP.sub("\n", text)  # same length: positions stay
    for found in _PIECE.finditer(cut):
        piece = found.group(0)
        number = _LIST_NUMBER.match(piece)
        body = piece[number.end() :] if number else piece
        squeezed = "".join(body.split())
        if weight(squeezed) >= PIECE_WEIGHT and squeezed in prompt.squeezed:
            for i in range(*found.span()):
                mask[i] = not text[i].isspace()
    return mask


def share(text: str, mask: bytearray) -> float:
    """The share of `text`'s non-space characters that `mask` marks."""
    total = len("".join(text.split()))
    return sum(mask) / total if total else 0.0


def reproduced(squeezed: str, reply: str) -> float:
    """The share of `squeezed` (a prompt part, without whitespace) that `reply` repeats."""
    if not squeezed:
        return 0.0
    said = "".join(reply.split())
    size = COPY_RUN
    marked = bytearray(len(squeezed))
    for start in range(len(squeezed) - size + 1):
        if squeezed[start : start + size] in said:
            marked[start : start + size] = b"\x01" * size
    kept = sum(1 for ch in squeezed if ch != "\x00")
    return sum(marked) / kept if kept else 0.0
