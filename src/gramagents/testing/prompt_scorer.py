"""Completions with prompt log-probabilities from a local causal LM, for the test server.

`ModelScorer` answers a `/v1/completions` request the way vLLM does: it tokenizes the prompt
text (special tokens added as the tokenizer adds them by default), takes each prompt token's
log-probability given the tokens before it from one forward pass (`None` for the first),
generates `max_tokens` tokens greedily, and lists the tokens as decoded text with offsets that
are the cumulative lengths of the tokens before them. A token that ends inside a multi-byte
character is listed as the empty string and the one that completes it carries the character,
so the listed tokens join to the prompt.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class ScoredToken:
    """One token of a completion, as the completions protocol lists it."""

    text: str
    logprob: float | None
    top: dict[str, float] | None


def token_texts(tokenizer: Any, ids: list[int]) -> list[str]:
    """Each token's text, decoded incrementally so that the texts join to the decoded whole."""
    texts, done = [], ""
    for end in range(1, len(ids) + 1):
        text = tokenizer.decode(ids[:end])
        if text.endswith("\ufffd"):  # a character cut between bytes: wait for its end
            texts.append("")
            continue
        texts.append(text[len(done) :] if text.startswith(done) else text)
        done = text
    return texts


class ModelScorer:
    """Prompt log-probabilities and greedy continuations from a loaded model."""

    def __init__(self, tokenizer: Any, model: Any) -> None:
        self.tokenizer = tokenizer
        self.model = model
        self._lock = threading.Lock()

    @classmethod
    def embedded(cls, dtype: str = "float32") -> ModelScorer:
        """The embedded SmolLM2 (the same weights `smollm2?dtype=...` loads)."""
        from ..models import create_backend

        lm = create_backend(f"smollm2?dtype={dtype}&device=cpu").lm  # type: ignore[attr-defined]
        return cls(lm.tokenizer, lm.model)

    def complete(self, prompt: str, max_tokens: int, top: int) -> tuple[list[ScoredToken], int]:
        """The prompt's tokens then `max_tokens` greedy ones; and how many are the prompt's."""
        import torch

        ids = list(self.tokenizer(prompt).input_ids)
        count = len(ids)
        with self._lock, torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
            while len(ids) < count + max_tokens:  # greedy; the last row scores the new token
                ids.append(int(logits[-1].argmax()))
                if len(ids) < count + max_tokens:
                    logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        scores = torch.log_softmax(logits, dim=-1)
        texts = token_texts(self.tokenizer, ids)
        tokens = [ScoredToken(texts[0], None, None)]
        for at in range(1, len(ids)):
            row = scores[at - 1]
            best = torch.topk(row, max(1, top))
            listed = {
                self.tokenizer.decode([int(i)]): float(v)
                for v, i in zip(best.values, best.indices, strict=True)
            }
            listed.setdefault(texts[at], float(row[ids[at]]))
            tokens.append(ScoredToken(texts[at], float(row[ids[at]]), listed))
        return tokens, count
