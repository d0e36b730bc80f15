"""Fences around the text a judge grades, and the judge's reply read without that text.

The answer and the task input are written by others (a model under test, a dataset): in the
judge's prompt each sits between tags that carry a fence chosen for that prompt, one the text
does not contain, so that no text inside can end its fence (`fence_for`). A judge that repeats
its prompt, or the answer, repeats whatever the answer wrote, a verdict of full marks
included; `read_reply` takes those parts out of the reply before its verdict is read, so that a
verdict written in the graded text is never read as the judge's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence

FENCED = ("task", "answer")
"""The tags of the fenced texts in the judge prompt (`prompts/judge.md`)."""
MAX_JSON_STARTS = 4000
"""Braces tried as the start of a JSON object per text: bounds the work on hostile input."""


def fence_for(*texts: str) -> str:
    """A fence none of `texts` contains, the same for the same texts (cache keys stay put).

    Eight hex digits of the texts' sha256; another slice (then a counter) when a text happens
    to contain it.
    """
    digest = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    candidates = (digest[at : at + 8] for at in range(0, len(digest) - 7, 8))
    for fence in candidates:
        if not any(fence in text for text in texts):
            return fence
    count = 0
    while any(f"f{count}" in text for text in texts):
        count += 1
    return f"f{count}"


def fenced_spans(reply: str, fence: str) -> Iterator[tuple[int, int]]:
    """Where `reply` repeats a fenced text, tags included (an unclosed one: to the end)."""
    tags = "|".join(FENCED)
    opening = re.compile(rf"<({tags})-{re.escape(fence)}>")
    at = 0
    while (found := opening.search(reply, at)) is not None:
        closing = f"</{found.group(1)}-{fence}>"
        end = reply.find(closing, found.end())
        stop = len(reply) if end < 0 else end + len(closing)
        yield found.start(), stop
        at = stop


def json_objects(text: str) -> Iterator[tuple[int, int, object]]:
    """Every JSON object written in `text`: (start, end, value), outermost ones only."""
    decoder = json.JSONDecoder()
    at, tries = 0, 0
    while (start := text.find("{", at)) >= 0 and tries < MAX_JSON_STARTS:
        tries += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            at = start + 1
            continue
        yield start, end, value
        at = end


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def read_reply(reply: str, fence: str, quoted: Sequence[str]) -> str:
    """The judge's reply without what it repeats of the graded texts.

    Removed: every fenced passage the reply repeats (a judge echoing its prompt), and every
    JSON object that the graded texts (`quoted`: the answer, the task input) also contain,
    written the same or with the same content. What is left is read as the verdict.
    """
    kept = _cut(reply, list(fenced_spans(reply, fence)))
    written = {_canonical(value) for text in quoted for _, _, value in json_objects(text)}
    if not written:
        return kept
    copies = [
        (start, end)
        for start, end, value in json_objects(kept)
        if _canonical(value) in written or any(kept[start:end] in text for text in quoted)
    ]
    return _cut(kept, copies)


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the (ordered, disjoint) spans."""
    if not spans:
        return text
    parts, at = [], 0
    for start, end in spans:
        parts.append(text[at:start])
        at = end
    parts.append(text[at:])
    return "".join(parts)
