"""What a local model's decoding gives back: finished generations, and answers cut by a stop.

A stop requested while a batch decodes (runtime/interrupt.py) ends `generate` after the step
in progress (`stop_criteria`); the rows that had finished by then are answers, the others are
not (`keep_finished`), and come back not asked.
"""

from __future__ import annotations

from typing import Any

from ..records import Generation, GenParams
from ..runtime.interrupt import STOP, not_asked_generation
from .hf_load import LoadedLM


def stop_criteria(*others: Any) -> Any:
    """Stopping criteria for `generate`: `others`, and one that ends every row on a stop."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class OnStop(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            rows = input_ids.shape[0]
            return torch.full((rows,), STOP.requested, dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([*others, OnStop()])


def keep_finished(generations: list[Generation], params: GenParams) -> list[Generation]:
    """`generations` as answers, but for rows a stop cut short: those are not asked.

    A row is finished when it ended (an end-of-sequence token or a stop string) or used all
    its `max_tokens`; a row cut short by the stop did neither.
    """
    if not STOP.requested:
        return generations
    return [
        g
        if g.finish_reason == "stop" or (g.completion_tokens or 0) >= params.max_tokens
        else not_asked_generation()
        for g in generations
    ]


def finish_generation(
    tokenizer: Any, new: list[int], eos: set[int], params: GenParams, prompt: int, elapsed: float
) -> Generation:
    """The generation of the tokens `new`: cut at the first end-of-sequence or stop string."""
    finish = "length"
    for cut, token in enumerate(new):
        if token in eos:
            new, finish = new[:cut], "stop"
            break
    # A cut in the middle of a multi-byte character decodes to U+FFFD: drop it.
    text = tokenizer.decode(new, skip_special_tokens=True).rstrip("\ufffd")
    for stop in params.stop:
        at = text.find(stop)
        if at >= 0:
            text, finish = text[:at], "stop"
    return Generation(
        text=text,
        finish_reason=finish,
        prompt_tokens=prompt,
        completion_tokens=len(new),
        latency_s=elapsed,
    )


def filled(results: list[Any]) -> list[Any]:
    """`results` once every slot holds one (a missing one is a bug: raised)."""
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        raise RuntimeError(f"no result for requests {missing[:5]}")
    return results


def eos_ids(lm: LoadedLM) -> set[int]:
    """Every token id that ends a generation (the generation config's and the tokenizer's)."""
    ids: set[int] = set()
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif isinstance(configured, (list, tuple)):
        ids.update(int(i) for i in configured)
    if lm.tokenizer.eos_token_id is not None:
        ids.add(int(lm.tokenizer.eos_token_id))
    return ids
