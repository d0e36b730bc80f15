"""Log-likelihoods from an OpenAI-compatible server's `/v1/completions` (echo and logprobs).

A minimal pair is scored on a server the way the legacy completions API allowed: the text is
sent as the prompt with `echo: true`, `logprobs: 1` and `max_tokens` 1 (vLLM and SGLang want at
least one new token; the generated one is ignored) or 0 (the spec's `echo_max_tokens`; the
decoding option `max_tokens` is the chat requests'), and the reply lists every prompt token
with its log-probability given the tokens before it (`null` for the first).

The conditioning is the local backend's (models/conditioning.py): the same context and scored
text, and the sum of the log-probabilities of the scored text's tokens. The server tokenizes,
so the client sends text and finds the tokens of the scored text by character position:

- The prompt's end is where its last echoed token ends (`text_offset` plus the token's length;
  cumulative token lengths when a server gives no usable offsets). The scored text starts
  `len(continuation)` characters before it. Anchoring at the end leaves the start free, so a
  server that adds a BOS token of its own (`<s>`, counted in its offsets but not in our
  prompt) is read right. This assumes the echoed tokens are the decoded text, as current vLLM
  and SGLang return them; a server that echoes raw byte-level pieces (`ĠThe`) is read right
  for ASCII text only.
- The scored tokens are those that start at the boundary or after it, and a token that spans
  the boundary: when the server's tokenizer merges the last characters of the context with the
  first of the continuation, that token's log-probability is counted (it covers text of both),
  where the local backend, tokenizing context and whole text apart, may cut one token later.
  The contexts the minimal-pair tasks send (none, or text ending before a space-led word) do
  not meet that case.
- An empty context is the model's prefix token (BOS, else EOS) locally. A server that adds BOS
  itself (Llama-family models on vLLM) gives it; for a model whose tokenizer adds nothing, the
  spec's `prefix` option is that token's text (`prefix=<|endoftext|>`), sent before the
  sentence. Without either, the first token of the sentence has no log-probability and the
  request fails with a line that says to set `prefix`.

`greedy` is read from `top_logprobs`: every scored token's log-probability is the highest one
listed at its place (false when the server lists none).
"""

from __future__ import annotations

from typing import Any

from ..records import Loglikelihood
from .conditioning import ScoringText


class NoPromptLogprobs(Exception):
    """The server's reply has no log-probabilities for the prompt's tokens."""


def prompt_text(text: ScoringText, prefix: str) -> str:
    """The prompt sent for a scoring text: its context (or the prefix) and the scored part."""
    return (text.context or prefix) + text.continuation


def completions_body(model: str, prompt: str, max_tokens: int) -> dict[str, Any]:
    """The `/v1/completions` request that echoes `prompt` with its tokens' log-probabilities."""
    return {
        "model": model,
        "prompt": prompt,
        "echo": True,
        "logprobs": 1,
        "max_tokens": max_tokens,
        "temperature": 0.0,
    }


def _logprobs(reply: Any) -> dict[str, Any]:
    try:
        choice = reply["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise NoPromptLogprobs("the reply has no choices") from None
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise NoPromptLogprobs("the reply's logprobs are null")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values):
        raise NoPromptLogprobs("the reply's logprobs have no tokens with token_logprobs")
    return logprobs


def _prompt_count(reply: Any, tokens: int, max_tokens: int) -> int:
    """How many of the echoed tokens are the prompt's (the rest were generated)."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    counted = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(counted, int) and 0 < counted <= tokens:
        return counted
    if isinstance(counted, int) and counted > tokens:
        raise NoPromptLogprobs(
            f"{tokens} token(s) listed for a prompt of {counted}: the prompt was not echoed"
        )
    return tokens - max_tokens


def _offsets(logprobs: dict[str, Any], tokens: list[str]) -> list[int]:
    """Where each token starts: the server's `text_offset`, else cumulative token lengths."""
    given = logprobs.get("text_offset")
    if (
        isinstance(given, list)
        and len(given) == len(tokens)
        and all(isinstance(o, int) and o >= 0 for o in given)
        and all(a <= b for a, b in zip(given, given[1:], strict=False))
    ):
        return list(given)
    starts, at = [], 0
    for token in tokens:
        starts.append(at)
        at += len(token)
    return starts


def _greedy(logprobs: dict[str, Any], indices: list[int], values: list[float]) -> bool:
    top = logprobs.get("top_logprobs")
    if not isinstance(top, list) or len(top) < max(indices, default=0) + 1:
        return False
    for index, value in zip(indices, values, strict=True):
        listed = top[index]
        if not isinstance(listed, dict) or not listed:
            return False
        if value < max(float(v) for v in listed.values()) - 1e-6:
            return False
    return True


def score_reply(reply: Any, continuation_chars: int, max_tokens: int) -> Loglikelihood:
    """The scored text's log-likelihood from a completions reply that echoed the prompt.

    Args:
        reply: the parsed JSON reply.
        continuation_chars: length of the scored text, which ends the prompt.
        max_tokens: the `max_tokens` the request asked for (tokens after the prompt's).

    Raises:
        NoPromptLogprobs: the reply does not give the prompt tokens' log-probabilities.
    """
    logprobs = _logprobs(reply)
    tokens = [t if isinstance(t, str) else "" for t in logprobs["tokens"]]
    values = logprobs["token_logprobs"]
    count = _prompt_count(reply, len(tokens), max_tokens)
    if count < 1:
        raise NoPromptLogprobs("the reply echoes none of the prompt's tokens")
    offsets = _offsets(logprobs, tokens)[:count]
    end = offsets[-1] + len(tokens[count - 1])
    boundary = end - continuation_chars
    if boundary < offsets[0]:
        raise NoPromptLogprobs("the echoed tokens do not cover the scored text")
    scored = [
        i for i in range(count) if offsets[i] >= boundary or offsets[i] + len(tokens[i]) > boundary
    ]
    picked: list[float] = []
    for index in scored:
        value = values[index]
        if value is None and index == 0:
            raise NoPromptLogprobs(
                "the sentence's first token has no log-probability, as nothing precedes it "
                "(give the model's BOS or EOS token text as the spec option prefix=...)"
            )
        if not isinstance(value, (int, float)):
            raise NoPromptLogprobs(f"token {index} of the prompt has no log-probability")
        picked.append(float(value))
    total = sum(picked)
    return Loglikelihood(
        logprob=total,
        mean_logprob=total / len(picked) if picked else 0.0,
        n_tokens=len(picked),
        greedy=_greedy(logprobs, scored, picked),
    )
