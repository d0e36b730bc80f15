"""Schema-guided decoding in one pass over each prompt: the steps share their KV cache.

The guided decoder (`guided.py`) writes a JSON answer field by field: every key, choice and
value is a step that continues the prompt and what was written so far. Run as separate
`generate` calls, each step computes the whole prompt again: a judge's five scores, its
total and its reason cost seven passes over a 1,500-token prompt. `CachedSteps` keeps, per
row, the KV cache of everything computed so far and its last logits, so each step computes
only its own new tokens: the prompt once, then a few tokens per field. Rows run one at a
time (no padding to realign as rows grow by different amounts). The backend keeps one
`CachedSteps` (bounded by `MAX_TOKENS`), so a re-asked request reuses its first prompt's cache.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from ..records import Generation, GenParams
from ..runtime.interrupt import STOP
from .hf_load import LoadedLM
from .hf_output import finish_generation, stop_criteria
from .hf_prefix import common_start

MAX_TOKENS = 16384
"""Tokens whose cache is kept at once, over all rows (about 370 MB for SmolLM2-135M)."""
MIN_SHARED = 16
"""The shortest shared start worth copying a row's cache for."""


@dataclass
class _Row:
    ids: list[int]
    cache: Any
    last: Any
    """Logits after the last token of `ids`."""


class CachedSteps:
    """`generate` and `score` for `GuidedDecoder`, each row's prefix computed once."""

    def __init__(self, lm: LoadedLM, eos: set[int]) -> None:
        import inspect

        self.lm = lm
        self.eos = eos
        self._rows: list[_Row] = []
        self._criteria: dict[tuple[str, ...], Any] = {}
        # transformers 5 names the argument `cache`; earlier releases `past_key_values`
        forward = inspect.signature(lm.model.forward).parameters
        self._cache_arg = "cache" if "cache" in forward else "past_key_values"

    def _take(self, ids: list[int]) -> _Row:
        """The row state for `ids`: the longest cached prefix, extended by the rest of `ids`."""
        import torch
        from transformers import DynamicCache

        best = self._continued(ids) or self._forked(ids) or _Row([], DynamicCache(), None)
        new = ids[len(best.ids) :]
        if new:
            with torch.inference_mode():
                out = self.lm.model(
                    input_ids=torch.tensor([new], device=self.lm.device),
                    use_cache=True,
                    logits_to_keep=1,
                    **{self._cache_arg: best.cache},
                )
            best = _Row(list(ids), best.cache, out.logits[0, -1].float())  # grown in place
        return best

    def _continued(self, ids: list[int]) -> _Row | None:
        """The longest kept row that `ids` continues, taken out of the kept rows."""
        best: _Row | None = None
        for row in self._rows:
            n = len(row.ids)
            if n <= len(ids) and ids[:n] == row.ids and (best is None or n > len(best.ids)):
                best = row
        if best is not None:
            self._rows.remove(best)
        return best

    def _forked(self, ids: list[int]) -> _Row | None:
        """A copy of the kept row sharing the longest start with `ids`, cut to that start.

        A re-asked request repeats its first prompt, then adds the answer and the error: its
        prompt's cache is reused. The row itself stays as it was, for its own next step.
        """
        shared, source = 0, None
        for row in self._rows:
            n = common_start(row.ids, ids)
            if n > shared:
                shared, source = n, row
        if source is None or shared < MIN_SHARED:
            return None
        keep = min(shared, len(ids) - 1)  # at least one token left to give the last logits
        cache = copy.deepcopy(source.cache)
        _crop(cache, keep)
        return _Row(ids[:keep], cache, None)

    def _stopping(self, stops: tuple[str, ...]) -> Any:
        """Criteria for these stop strings, made once: making them reads the whole vocabulary."""
        if not stops:
            return []
        if stops not in self._criteria:
            from transformers import StoppingCriteriaList, StopStringCriteria

            criteria = StopStringCriteria(self.lm.tokenizer, list(stops))
            self._criteria[stops] = StoppingCriteriaList([criteria])
        return self._criteria[stops]

    def _keep(self, row: _Row) -> None:
        self._rows.append(row)
        while len(self._rows) > 1 and sum(len(r.ids) for r in self._rows) > MAX_TOKENS:
            del self._rows[0]  # the oldest first

    def generate(self, batch: list[list[int]], params: GenParams) -> list[Generation]:
        """Continue each row (its cached prefix is not computed again)."""
        return [self._generate_one(ids, params) for ids in batch]

    def _generate_one(self, ids: list[int], params: GenParams) -> Generation:
        import torch

        STOP.check()  # a stop abandons the object this step belongs to (hf.py)
        started = time.perf_counter()
        row = self._take(ids[:-1])  # generate computes the last token itself
        tokenizer = self.lm.tokenizer
        kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_tokens,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": sorted(self.eos),
            self._cache_arg: row.cache,
            "return_dict_in_generate": True,
            "output_logits": True,
        }
        kwargs["stopping_criteria"] = stop_criteria(*self._stopping(params.stop))
        if params.temperature > 0:
            kwargs.update(do_sample=True, temperature=params.temperature, top_p=params.top_p)
            torch.manual_seed(params.seed if params.seed is not None else 0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        prompt = torch.tensor([ids], device=self.lm.device)
        with torch.inference_mode():
            out = self.lm.model.generate(
                input_ids=prompt, attention_mask=torch.ones_like(prompt), **kwargs
            )
        _crop(row.cache, len(ids))  # the prompt is kept; the caller re-encodes the value it takes
        self._keep(_Row(list(ids), row.cache, out.logits[0][0].float()))
        new = out.sequences[0, len(ids) :].tolist()
        return finish_generation(
            tokenizer, new, self.eos, params, len(ids), time.perf_counter() - started
        )

    def score(self, prefixes: list[list[int]], choices: list[list[int]]) -> list[list[float]]:
        """Log-likelihood of each choice after each prefix (the prefix computed once)."""
        return [self._score_one(prefix, choices) for prefix in prefixes]

    def _score_one(self, prefix: list[int], choices: list[list[int]]) -> list[float]:
        import torch

        STOP.check()
        row = self._take(prefix)
        first = torch.log_softmax(row.last, dim=-1)
        scores = []
        for choice in choices:
            total = float(first[choice[0]])
            if len(choice) > 1:
                with torch.inference_mode():
                    out = self.lm.model(
                        input_ids=torch.tensor([choice[:-1]], device=self.lm.device),
                        use_cache=True,
                        **{self._cache_arg: row.cache},
                    )
                steps = torch.log_softmax(out.logits[0].float(), dim=-1)
                targets = torch.tensor(choice[1:], device=steps.device).unsqueeze(1)
                total += float(steps.gather(1, targets).sum())
                _crop(row.cache, len(prefix))
            scores.append(total)
        self._keep(row)
        return scores


def _crop(cache: Any, length: int) -> None:
    """Keep the first `length` positions of `cache` (a negative count removes from its end)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)
