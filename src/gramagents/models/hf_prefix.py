"""A generation batch's inputs, with the start its prompts share computed once.

The prompts of one batch often begin alike: the chat template's system text, then a task's
fixed instruction (on the quick start's CPG prompts, 24 tokens or more of about 140). Left-
padded as they are, every row computes that start again. Here the longest start that every
row shares is run once, as a batch of one, and its KV cache copied to every row; each row
then goes on from it with the rest of its prompt, padded on the left of that rest:

    [shared start][pad ... pad][rest of row 1]
    [shared start][pad][rest of row 2 .......]

The attention mask hides the padding and the positions skip it, so each row attends to, and
is placed after, exactly what it would be unshared; only rounding differs (the start computed
in a batch of one instead of many).
"""

from __future__ import annotations

import inspect
from typing import Any

MIN_SHARED = 16
"""The shortest shared start worth a pass of its own."""


def shared_start(batch: list[list[int]]) -> int:
    """Tokens every row of `batch` begins with, leaving each row at least one of its own."""
    first, shortest = batch[0], min(len(ids) for ids in batch)
    n = 0
    while n < shortest - 1 and all(ids[n] == first[n] for ids in batch):
        n += 1
    return n


def batch_inputs(lm: Any, batch: list[list[int]], share: bool) -> tuple[Any, Any, dict[str, Any]]:
    """`input_ids`, `attention_mask` and the filled KV cache as `generate`'s keyword (or none).

    With `share` and a shared start of at least `MIN_SHARED` tokens in a batch of two rows or
    more, the start is computed here once; otherwise (or when the model's cache cannot be
    copied to every row) the rows are plainly left-padded.
    """
    shared = shared_start(batch) if share and len(batch) > 1 else 0
    if shared >= MIN_SHARED:
        input_ids, attention = _layout(lm, batch, shared)
        cached = _start_cache(lm, input_ids[:1, :shared], len(batch))
        if cached:
            return input_ids, attention, cached
    input_ids, attention = _layout(lm, batch, 0)
    return input_ids, attention, {}


def _layout(lm: Any, batch: list[list[int]], shared: int) -> tuple[Any, Any]:
    """Rows as `[shared start][pad][rest]` (plain left padding when `shared` is 0)."""
    import torch

    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), lm.tokenizer.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        input_ids[row, :shared] = torch.tensor(ids[:shared], dtype=torch.long)
        attention[row, :shared] = 1
        input_ids[row, width - (len(ids) - shared) :] = torch.tensor(ids[shared:])
        attention[row, width - (len(ids) - shared) :] = 1
    return input_ids, attention


def _start_cache(lm: Any, start: Any, rows: int) -> dict[str, Any]:
    """The KV cache of `start` (one row), repeated for `rows` rows, as `generate`'s keyword.

    Empty when the model's cache cannot be repeated (a kind other than transformers' usual
    key-value cache): the rows are then plainly padded.
    """
    import torch

    with torch.inference_mode():
        out = lm.model(input_ids=start.to(lm.device), use_cache=True)
    cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    repeat = getattr(cache, "batch_repeat_interleave", None)
    if repeat is None:
        return {}
    repeat(rows)
    # transformers 5 names the argument `cache`; earlier releases `past_key_values`
    forward = inspect.signature(lm.model.forward).parameters
    return {"cache" if "cache" in forward else "past_key_values": cache}
