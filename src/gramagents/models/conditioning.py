"""How a scored text is conditioned: what stands before it, and which tokens are scored.

A causal model cannot score the first token of a text without something before it, and how
a sentence is written after that something changes its score: after a space, most English
tokenizers start it with a different token (` The`, not `The`) with a different probability.
So a minimal pair's decision depends on the conditioning, not only on the model. Two are
offered, both as lm-evaluation-harness forms a `multiple_choice` request (the context, then
the task's target delimiter, then the choice) and encodes it for a causal model:

- `spaced`: the sentence after a space. lm-eval's default target delimiter, as its BLiMP
  tasks are defined (empty context, the two sentences as choices): the model's prefix token,
  then the tokens of `" " + sentence`.
- `bare`: the sentence as a text begins, with nothing between it and the context. lm-eval
  with `target_delimiter: ""`, as its ZhoBLiMP, MultiBLiMP, TurBLiMP and BLiMP-NL tasks are
  defined: the prefix token, then the tokens of the sentence.

The encoding is lm-eval's (`TemplateLM.loglikelihood` and `_encode_pair` for causal models):
an empty context is the model's prefix token (BOS, else EOS) alone; a non-empty context gives
its trailing whitespace to the continuation, the whole text is tokenized once and the
continuation's tokens are those after the context's own tokens.

Every backend uses this module: `scoring_text` gives the two strings (a completions API with
echo and log-probabilities is sent `context + continuation`, with the prefix token's text
standing for an empty context, and sums the log-probabilities of the tokens from
`len(context)` on), `encode` the token ids a local tokenizer makes of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, get_args

from ..records import Conditioning, LoglikelihoodRequest

CONDITIONINGS: tuple[str, ...] = get_args(Conditioning)

DELIMITERS: dict[str, str] = {"spaced": " ", "bare": ""}
"""The text each conditioning puts between the context and the scored sentence."""

DESCRIPTIONS: dict[str, str] = {
    "spaced": "the sentence after a space, after the model's prefix token "
    "(lm-eval's default target delimiter, as its BLiMP tasks are defined)",
    "bare": "the sentence as a text begins, after the model's prefix token "
    '(lm-eval with target_delimiter "", as its ZhoBLiMP tasks are defined)',
}


@dataclass(frozen=True)
class ScoringText:
    """The text a log-likelihood is taken of, cut where the scored part begins."""

    context: str
    """Text before the scored part; empty: the model's prefix token alone."""
    continuation: str
    """The scored text."""


def scoring_text(request: LoglikelihoodRequest) -> ScoringText:
    """The context and the scored text of a request, as lm-eval forms and splits them."""
    context = request.context
    continuation = DELIMITERS[request.conditioning] + request.continuation
    spaces = len(context) - len(context.rstrip())
    if spaces:  # a word is tokenized with its leading space, so the space goes with it
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    return ScoringText(context=context, continuation=continuation)


def prefix_token_id(tokenizer: Any) -> int:
    """The token that stands for an empty context: BOS, or EOS for a model without one."""
    bos = tokenizer.bos_token_id
    return int(bos if bos is not None else tokenizer.eos_token_id)


def _tokens(tokenizer: Any, text: str) -> list[int]:
    """The tokenizer's own ids of `text`, special tokens as it adds them by default.

    A text that already starts with the prefix token gets none added (lm-eval's `tok_encode`).
    """
    prefix = tokenizer.decode(prefix_token_id(tokenizer))
    if prefix and text.startswith(prefix):
        return list(tokenizer(text, add_special_tokens=False).input_ids)
    return list(tokenizer(text).input_ids)


def encode(tokenizer: Any, text: ScoringText) -> tuple[list[int], list[int]]:
    """Context and continuation token ids of `text` for a causal model (lm-eval's encoding)."""
    if not text.context:
        ids = list(tokenizer(text.continuation, add_special_tokens=False).input_ids)
        prefix = prefix_token_id(tokenizer)
        if ids and ids[0] == prefix:  # the text itself starts with the prefix token
            return ids[:1], ids[1:]
        return [prefix], ids
    whole = _tokens(tokenizer, text.context + text.continuation)
    context = _tokens(tokenizer, text.context)
    return context, whole[len(context) :]
