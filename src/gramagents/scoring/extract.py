"""Answer extraction: a named chain of rules per answer type, with an explicit invalid outcome.

Every reply is read the way a careful grader reads it, in the same steps for every chain:

1. normalised (`normalise.py`: NFKC, reasoning blocks and decorating markdown removed);
2. screened (`screens.py`): a refusal or a hedge is invalid, whatever letters it holds;
3. compared with the prompt that was sent (`echo.py`): answer tokens inside text the reply
   copies from the prompt never count, and option texts are read as the option they name
   (`options.py`), never as letters;
4. read by the chain's rules, in order; the first rule that finds an answer names itself in
   the response record. A rule returns None when it does not apply, or `Invalid(reason)`
   when what it reads is no answer (two different answers: `conflict`; alternatives
   offered: `hedge`), which ends the chain.

An invalid extraction says why (`reason`): `echo` (the reply mostly repeats the prompt),
`refusal`, `hedge`, `conflict`, or `no-answer` (nothing readable). Nothing is ever guessed.
Rules see the item's metadata, so a choice question knows its options and a batch question
how many sub-answers it expects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..plugins import Registry

INVALID = "invalid"
ECHO = "echo"
REFUSAL = "refusal"
HEDGE = "hedge"
CONFLICT = "conflict"
NO_ANSWER = "no-answer"
REASONS = (ECHO, REFUSAL, HEDGE, CONFLICT, NO_ANSWER)
"""Why an answer is invalid, in the order reports list them."""


@dataclass(frozen=True)
class Extraction:
    """An extracted answer (None when invalid), the rule that produced it, and why not."""

    value: Any
    rule: str
    reason: str | None = None
    """Why the answer is invalid (one of `REASONS`); None for a read answer."""

    @property
    def invalid(self) -> bool:
        """True when no rule could read an answer."""
        return self.rule == INVALID


@dataclass(frozen=True)
class Invalid:
    """What a rule returns for a reply that holds no answer, and why (`hedge`, `conflict`)."""

    reason: str


Meta = Mapping[str, Any]
Rule = Callable[[str, Meta], Any]
AnswerKind = Literal["tokens", "text"]


@dataclass(frozen=True)
class ChainSpec:
    """A chain: its rules, and what kind of answer they read."""

    rules: list[tuple[str, Rule]]
    answer: AnswerKind = "tokens"
    """`tokens`: letters, codes, numbers (answer tokens copied from the prompt are hidden from
    the rules); `text`: a correction, a phrase, a translation (text copied from the prompt's
    instruction is no answer)."""
    own_text: tuple[str, ...] = ()
    """For text answers: the metadata keys of the item's own text, which an answer may copy
    (the sentence to correct, the sentence a phrase comes from)."""


CHAINS: Registry[ChainSpec] = Registry("extraction chain")
_SHARED = {
    "letter": "choice",
    "code": "choice",
    "tf": "truefalse",
    "tf-sequence": "truefalse",
    "pair-choice": "pair_choice",
}
for _name, _module in _SHARED.items():  # the engine's chains, by the module that makes them
    CHAINS.lazy(_name, f"gramagents.scoring.{_module}")


def chain(
    name: str,
    rules: list[tuple[str, Rule]],
    *,
    answer: AnswerKind = "tokens",
    own_text: tuple[str, ...] = (),
) -> None:
    """Register an extraction chain (see `ChainSpec` for `answer` and `own_text`)."""
    CHAINS.register(name, ChainSpec(rules, answer, own_text))


def known_chains() -> list[str]:
    """Names of registered chains."""
    return CHAINS.names()


def chain_spec(name: str) -> ChainSpec:
    """The chain called `name`."""
    spec = CHAINS.get(name)
    if spec is None:
        raise KeyError(f"no extraction chain '{name}'")
    return spec


def extract(
    chain_name: str,
    text: str | None,
    meta: Meta | None = None,
    prompt: str | Sequence[Any] | None = None,
) -> Extraction:
    """Read `text` with chain `chain_name`.

    Args:
        chain_name: the task's chain.
        text: the model's reply (None: the request failed).
        meta: the item's metadata and prompt variables, for rules that need them.
        prompt: the prompt that was sent (a string, or its chat messages); without it no
            echo can be recognised.
    """
    from .reading import read

    spec = chain_spec(chain_name)
    if text is None:
        return Extraction(None, INVALID, NO_ANSWER)
    return read(spec, text, meta or {}, prompt)


def run_rules(rules: list[tuple[str, Rule]], text: str, meta: Meta) -> Extraction | None:
    """The first answer a rule reads, an `Invalid` a rule returns, or None."""
    for rule_name, rule in rules:
        value = rule(text, meta)
        if isinstance(value, Invalid):
            return Extraction(None, INVALID, value.reason)
        if value is not None:
            return Extraction(value, rule_name)
    return None
