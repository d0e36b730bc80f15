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
import weakref
from typing import Any

from ..runtime.interrupt import STOP

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
        out = _body(lm.model)(input_ids=start.to(lm.device), use_cache=True)
    cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    repeat = getattr(cache, "batch_repeat_interleave", None)
    if repeat is None:
        return {}
    repeat(rows)
    return {_cache_keyword(lm.model): cache}


def _body(model: Any) -> Any:
    """The model without its output head: a prompt's start needs its cache, not its logits."""
    return getattr(model, "base_model", None) or model


def _cache_keyword(model: Any) -> str:
    """The cache argument's name: `cache` in transformers 5, `past_key_values` before."""
    forward = inspect.signature(model.forward).parameters
    return "cache" if "cache" in forward else "past_key_values"


def generation_inputs(
    lm: Any, batch: list[list[int]], share: bool, in_runs: bool
) -> tuple[Any, Any, dict[str, Any]] | None:
    """`generate`'s inputs for `batch`, its prompts computed in runs or as one padded batch.

    In runs (`prefilled`) with `in_runs`, where the model's cache allows; else one plainly
    padded batch (`batch_inputs`). None when a stop (runtime/interrupt.py) came between runs:
    the batch is not asked.
    """
    if in_runs:
        prepared = prefilled(lm, batch, prefill_groups(batch, share), share)
        if prepared is not None or STOP.requested:
            return prepared
    return batch_inputs(lm, batch, share)


_PLAIN: weakref.WeakSet[Any] = weakref.WeakSet()
"""Models whose cache `prefilled` cannot join (a sliding window, another kind of cache)."""

PASS_TOKENS = 16
"""What one more forward pass costs on a CPU, in tokens computed (its fixed overhead)."""


def common_start(a: list[int], b: list[int]) -> int:
    """How many tokens `a` and `b` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def prefill_groups(batch: list[list[int]], share: bool) -> list[list[int]]:
    """Row indices of `batch` (longest first) cut into runs that compute the fewest tokens.

    A run's prompts are computed together, left-padded to its longest, after the start they
    all share (computed once when it is `MIN_SHARED` tokens or more). A long run pads short
    prompts and shares a shorter start; a short one pays another forward pass. Which cuts
    are cheapest is found exactly, by dynamic programming over the cut points.
    """
    n = len(batch)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for first in range(n):
        start = len(batch[first])
        for last in range(first, n):
            if share and last > first:
                start = min(start, common_start(batch[first], batch[last]), len(batch[last]) - 1)
            shared = start if share and last > first and start >= MIN_SHARED else 0
            rows = last - first + 1
            cost = shared + rows * (len(batch[first]) - shared) + PASS_TOKENS * (1 + (shared > 0))
            if best[first] + cost < best[last + 1]:
                best[last + 1], cut[last + 1] = best[first] + cost, first
    runs, end = [], n
    while end > 0:
        runs.append(list(range(cut[end], end)))
        end = cut[end]
    return runs[::-1]


def prefilled(
    lm: Any, batch: list[list[int]], runs: list[list[int]], share: bool
) -> tuple[Any, Any, dict[str, Any]] | None:
    """`generate`'s inputs for `batch` with every prompt but its last token computed here.

    Each run of rows (`prefill_groups`: consecutive, in the batch's order) is computed on its
    own, after its shared start; their caches are then left-padded to one width and decoded
    as one batch, so that a batch decodes many rows while its prompts are computed with
    little padding. `generate` then computes each row's last token and goes on. None when
    the model's cache is not the usual key-value one (or a run's prompts are one token
    each): the caller pads plainly; None too when a stop comes between runs.
    """
    import torch
    from torch.nn.functional import pad

    if lm.model in _PLAIN or any(len(batch[run[0]]) < 2 for run in runs):
        return None
    parts = []
    for run in runs:
        if STOP.requested:  # a stop: the runs left are not computed
            return None
        part = _prefill_run(lm, [batch[i] for i in run], share)
        if part is None:
            _PLAIN.add(lm.model)  # known from now on: its batches are padded plainly
            return None
        parts.append(part)
    width = max(ids.shape[1] for _, ids, _ in parts)
    fill = lm.tokenizer.pad_token_id
    input_ids = torch.cat([pad(ids, (width - ids.shape[1], 0), value=fill) for _, ids, _ in parts])
    attention = torch.cat([pad(mask, (width - mask.shape[1], 0)) for _, _, mask in parts])
    from transformers import DynamicCache

    cache = DynamicCache()
    for index in range(len(parts[0][0])):
        keys, values = [], []
        for layers, ids, _ in parts:
            key, value = layers[index]
            left = width - ids.shape[1]
            keys.append(pad(key, (0, 0, left, 0)))
            values.append(pad(value, (0, 0, left, 0)))
        cache.update(torch.cat(keys), torch.cat(values), index)
    return input_ids, attention, {_cache_keyword(lm.model): cache}


def _prefill_run(lm: Any, rows: list[list[int]], share: bool) -> tuple[list[Any], Any, Any] | None:
    """Per layer (keys, values) of `rows` but their last tokens, with their ids and mask."""
    import torch

    input_ids, attention, cached = batch_inputs(lm, rows, share)
    start = next(iter(cached.values()), None)
    shared = start.get_seq_length() if start is not None else 0
    width = input_ids.shape[1]
    if start is not None and shared == width - 1:  # each row's rest is its last token
        cache = start
    else:
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        device = lm.device
        with torch.inference_mode():
            out = _body(lm.model)(
                input_ids=input_ids[:, shared : width - 1].to(device),
                attention_mask=attention[:, : width - 1].to(device),
                position_ids=positions[:, shared : width - 1].to(device),
                use_cache=True,
                **cached,
            )
        cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
    layers = []
    for layer in getattr(cache, "layers", None) or []:
        key, value = getattr(layer, "keys", None), getattr(layer, "values", None)
        if getattr(layer, "is_sliding", False) or key is None or key.dim() != 4:
            return None
        if key.shape[0] != len(rows) or key.shape[-2] != width - 1:
            return None
        layers.append((key, value))
    return (layers, input_ids, attention) if layers else None
