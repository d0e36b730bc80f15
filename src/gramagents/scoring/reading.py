"""How a chain reads one reply: the steps of `extract.extract` after the chain is found."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from . import echo
from .extract import (
    ECHO,
    INVALID,
    NO_ANSWER,
    REFUSAL,
    ChainSpec,
    Extraction,
    Meta,
    run_rules,
)
from .normalise import normalise_reply
from .options import cut_option, mark, option_lines_echoed, option_spans
from .screens import apologises, screen

HIDDEN = "□"
"""What an answer token copied from the prompt becomes before the rules read the reply."""
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z]|\d+(?:\.\d+)?|true|false|yes|no)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
CONTEXT_WORDS = 3
"""Letters and digits of the prompt's own words that make a copied answer token an echo."""
MAX_SKIPPED_LINES = 8
"""Lines that repeat the instruction a text answer may skip before its answer."""


def read(spec: ChainSpec, text: str, meta: Meta, prompt: str | Sequence[Any] | None) -> Extraction:
    """Normalise, screen, compare with the prompt and read `text` with `spec`'s rules."""
    reply = normalise_reply(text)
    if not reply:
        return _invalid(NO_ANSWER)
    own = echo.own_texts(meta, spec.own_text) if spec.answer == "text" else []
    against = echo.Prompt(prompt, own) if prompt is not None else None
    if spec.answer == "text":
        return _read_text(spec, reply, meta, against)
    reason = screen(reply, against)
    if reason is not None:
        return _invalid(reason)
    if against is not None and option_lines_echoed(reply, meta, against):
        return _invalid(ECHO)
    reading, copied_share = hide_copied(reply, meta, against)
    found = run_rules(spec.rules, reading, meta)
    if found is not None:
        return found
    if against is not None and copied_share < echo.ECHO_SHARE:
        mask = echo.copied(reply, against.squeezed)
        pieces = echo.pieces_copied(reply, against)
        copied_share = echo.share(
            reply, bytearray(a | b for a, b in zip(mask, pieces, strict=True))
        )
    return _invalid(_why_nothing(reply, against, copied_share))


def _invalid(reason: str) -> Extraction:
    return Extraction(None, INVALID, reason)


def _why_nothing(reply: str, prompt: echo.Prompt | None, copied_share: float) -> str:
    if copied_share >= echo.ECHO_SHARE:
        return ECHO
    return REFUSAL if apologises(reply, prompt) else NO_ANSWER


def hide_copied(reply: str, meta: Meta, prompt: echo.Prompt | None) -> tuple[str, float]:
    """The reply as token rules read it, and the share of it copied from the prompt.

    Option texts become their marks (`options.mark`). What the reply copies from the prompt
    *with the prompt's own words around it* is no answer: there, an answer token (a single
    letter, a number, true/false/yes/no) becomes `HIDDEN` and an option text is dropped
    (`请使用T或F回答`, an echoed list of options). A token or option copied with nothing but
    quotes or its option line around it (`“False”.` from `answer with “True” or “False”.`,
    `D. 能愿动词：会`) may well be the model's own answer, and stays.
    """
    copied = bytearray(len(reply))
    if prompt is not None and len(reply) >= echo.COPY_RUN:
        copied = echo.copied(reply, prompt.squeezed)
    options = option_spans(reply, meta)
    if not options and not any(copied):
        return reply, 0.0
    chars = list(reply)
    echoed: set[int] = set()
    if prompt is not None and any(copied):
        cut = cut_option(reply, meta)
        if cut is not None and not any(start <= cut < end for start, end, _ in options):
            chars[cut:] = HIDDEN * (len(reply) - cut)  # part of an option, naming none
            options = [o for o in options if o[1] <= cut]
        tokens = [t.span() for t in _TOKEN.finditer(reply) if cut is None or t.end() <= cut]
        spans = [*tokens, *(o[:2] for o in options)]
        spans += [(cut, len(reply))] if cut is not None else []
        runs, words = _runs(reply, copied, spans)
        for start, end in tokens:
            if words[runs[start]] >= CONTEXT_WORDS and _within(reply, copied, start, end, prompt):
                chars[start:end] = HIDDEN * (end - start)
        echoed = {
            start
            for start, end, _ in options
            if words[runs[start]] >= CONTEXT_WORDS
            and all(copied[i] for i in range(start, end) if not reply[i].isspace())
        }
    for start, end, index in reversed(options):
        chars[start:end] = [HIDDEN if start in echoed else mark(index)]
    return "".join(chars), echo.share(reply, copied)


def _within(reply: str, copied: bytearray, start: int, end: int, prompt: echo.Prompt) -> bool:
    """Whether `reply[start:end]` is copied with the prompt's text on both sides of it.

    A token copied with words before it only (`Sentences 1-3 are T` after `judge sentences 1
    to 9`) starts the model's own words. The reply's end counts as copied (an echo cut off
    by the length limit, ending `请只使用选项字母回答。` and the `A` of the next line); so
    does its start when the token's line goes on copying (`A. 公元前221年`, another question's
    options listed), but not a token alone on the first line (`T`, then the instruction
    echoed). A token that ends or starts the prompt itself is copied whole, nothing of the
    prompt being there to copy beyond it.
    """
    if not all(copied[start:end]):
        return False
    before = next((i for i in range(start - 1, -1, -1) if not reply[i].isspace()), None)
    after = next((i for i in range(end, len(reply)) if not reply[i].isspace()), None)
    right = after is None or bool(copied[after])
    if before is None:
        left = after is not None and right and "\n" not in reply[end:after]
    else:
        left = bool(copied[before])
    if left and right:
        return True
    head = "".join(reply[start:].split())[: echo.COPY_RUN]
    tail = "".join(reply[:end].split())[-echo.COPY_RUN :]
    return prompt.squeezed.startswith(head) or prompt.squeezed.endswith(tail)


def _runs(
    reply: str, copied: bytearray, answers: list[tuple[int, int]]
) -> tuple[list[int], list[int]]:
    """Per character, the copied run it is in; per run, its letters and digits besides answers.

    `answers` are the spans of answer tokens and option texts, which do not count. Spaces
    inside a run keep it going (the comparison ignores them).
    """
    in_answer = bytearray(len(reply))
    for start, end in answers:
        in_answer[start:end] = b"\x01" * (end - start)
    runs = [0] * len(reply)
    words = [0]
    inside = False
    for i, ch in enumerate(reply):
        if copied[i]:
            if not inside:
                words.append(0)
                inside = True
            runs[i] = len(words) - 1
            words[-1] += int(ch.isalnum() and not in_answer[i])
        elif not ch.isspace():  # spaces inside a run keep it going
            inside = False
    return runs, words


def _read_text(spec: ChainSpec, reply: str, meta: Meta, prompt: echo.Prompt | None) -> Extraction:
    """A text answer: invalid when it repeats the instruction rather than answering."""
    if prompt is None or echo.share(reply, echo.copied(reply, prompt.own_squeezed)) < 0.5:
        reason = screen(reply, prompt, free_text=True)
        if reason is not None:
            return _invalid(reason)
    if prompt is not None:
        rest = _unechoed(reply, prompt, whole=bool(spec.own_text))
        if rest is None:
            return _invalid(ECHO)
        reply = rest
    for _ in range(MAX_SKIPPED_LINES):
        found = run_rules(spec.rules, reply, meta)
        if found is None or found.invalid:
            return found or _invalid(_why_nothing(reply, prompt, _instruction_share(reply, prompt)))
        if not _echoed(str(found.value), prompt) and not _cut_line(found.value, reply, prompt):
            return found
        rest = _without_echoed_line(reply, prompt)
        if rest is None:
            break
        reply = rest
    return _invalid(ECHO)


def _unechoed(reply: str, prompt: echo.Prompt, whole: bool) -> str | None:
    """The reply without what only echoes the prompt (None: nothing else is left).

    Where the item's own text is apart from the instruction (`whole`: a correction, a
    phrase), a reply that repeats most of the instruction keeps only what stands on its own
    lines after the echo; where the whole prompt is a question, an answer may well restate
    most of it (`这句话的深层含义是…`). Lines that are whole lines of the prompt holding more
    than the item's own text go (`Sentence: …`, where a quoted phrase of the sentence is no
    answer), and so does a last line the length limit cut off in the middle of a prompt
    line. What is left of the prompt's lines around the item's own text, unchanged, is an
    echo.
    """
    if whole and echo.reproduced(prompt.instruction, reply) >= echo.INSTRUCTION_SHARE:
        rest = _after_echo(reply, prompt)
        if rest is None:
            return None
        reply = rest
    lines = reply.split("\n")
    kept = [line for line in lines if echo.line_key(line) not in prompt.lines]
    if kept and _cut_line(kept[-1], reply, prompt):
        kept.pop()
    rest = "\n".join(kept).strip()
    if len(kept) < len(lines) and echo.line_key(rest) in {echo.line_key(t) for t in prompt.own}:
        return None  # the prompt's lines around the item's own text, unchanged: an echo
    return rest or None


def _cut_line(value: object, reply: str, prompt: echo.Prompt | None) -> bool:
    """Whether a text answer is the start of a prompt line that the reply's end cuts off.

    `Questi`: the length limit was reached while echoing `Question: …`.
    """
    key = echo.line_key(str(value))
    if prompt is None or len(key) < 4 or not reply.rstrip().endswith(str(value).rstrip()):
        return False
    return any(line.startswith(key) and line != key for line in prompt.lines)


def _instruction_share(text: str, prompt: echo.Prompt | None) -> float:
    if prompt is None:
        return 0.0
    return echo.share(text, echo.copied(text, prompt.instruction, prompt.own_squeezed))


def _echoed(text: str, prompt: echo.Prompt | None) -> bool:
    """Whether a text answer repeats the instruction, or a whole line of the prompt.

    A line that is only the item's own text (the sentence to correct) may be the answer; one
    that holds more (`Sentence: …` of a prompt echoed line by line) is an echo.
    """
    if prompt is None:
        return False
    return (
        _instruction_share(text, prompt) >= echo.ANSWER_ECHO_SHARE
        or echo.line_key(text) in prompt.lines
    )


def _after_echo(reply: str, prompt: echo.Prompt) -> str | None:
    """What stands on its own lines after the reply's last copy of the instruction."""
    copied = echo.copied(reply, prompt.instruction, prompt.own_squeezed)
    last = max((i for i, c in enumerate(copied) if c), default=-1)
    head, newline, rest = reply[last + 1 :].partition("\n")
    if not newline or re.search(r"[^\W_]", head) or not rest.strip():
        return None
    return rest.strip()


def _without_echoed_line(reply: str, prompt: echo.Prompt | None) -> str | None:
    """The reply without its first line that repeats the prompt (None: there is none)."""
    lines = reply.split("\n")
    for index, line in enumerate(lines):
        if line.strip() and _echoed(line, prompt):
            rest = "\n".join(lines[:index] + lines[index + 1 :]).strip()
            return rest or None
    return None
