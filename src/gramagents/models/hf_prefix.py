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
    more, the start is computed here once; otherwise the rows are plainly left-padded.
    """
    import torch

    shared = shared_start(batch) if share and len(batch) > 1 else 0
    if shared < MIN_SHARED:
        shared = 0
    rest = max(len(ids) for ids in batch) - shared
    width = shared + rest
    input_ids = torch.full((len(batch), width), lm.tokenizer.pad_token_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        input_ids[row, :shared] = torch.tensor(ids[:shared], dtype=torch.long)
        attention[row, :shared] = 1
        input_ids[row, width - (len(ids) - shared) :] = torch.tensor(ids[shared:])
        attention[row, width - (len(ids) - shared) :] = 1
    if not shared:
        return input_ids, attention, {}
    with torch.inference_mode():
        out = lm.model(input_ids=input_ids[:1, :shared].to(lm.device), use_cache=True)
    cache = getattr(out, "cache", None) or out.past_key_values
    cache.batch_repeat_interleave(len(batch))
    # transformers 5 names the argument `cache`; earlier releases `past_key_values`
    forward = inspect.signature(lm.model.forward).parameters
    return input_ids, attention, {"cache" if "cache" in forward else "past_key_values": cache}
