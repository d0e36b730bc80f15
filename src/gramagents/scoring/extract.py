"""Answer extraction: a named chain of rules per answer type, with an explicit invalid outcome.

Each chain tries its rules in order; the first rule that finds an answer names itself in the
response record, so the invalid rate and the rules that fired can be audited. Nothing is ever
guessed: text that no rule reads is `invalid`. Rules see the item's metadata, so a choice
question knows its option letters and a batch question how many sub-answers it expects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..plugins import Registry

INVALID = "invalid"


@dataclass(frozen=True)
class Extraction:
    """An extracted answer (None when invalid) and the rule that produced it."""

    value: Any
    rule: str

    @property
    def invalid(self) -> bool:
        """True when no rule could read an answer."""
        return self.rule == INVALID


Meta = Mapping[str, Any]
Rule = Callable[[str, Meta], Any]
CHAINS: Registry[list[tuple[str, Rule]]] = Registry("extraction chain")


def chain(name: str, rules: list[tuple[str, Rule]]) -> None:
    """Register an extraction chain."""
    CHAINS.register(name, rules)


def known_chains() -> list[str]:
    """Names of registered chains."""
    _load_builtin()
    return CHAINS.names()


def extract(chain_name: str, text: str | None, meta: Meta | None = None) -> Extraction:
    """Run chain `chain_name` over `text`, with the item's metadata for rules that need it."""
    rules = CHAINS.get(chain_name)
    if rules is None:
        _load_builtin()
        rules = CHAINS.get(chain_name)
    if rules is None:
        raise KeyError(f"no extraction chain '{chain_name}'")
    if text is None:
        return Extraction(None, INVALID)
    for rule_name, rule in rules:
        value = rule(text, meta or {})
        if value is not None:
            return Extraction(value, rule_name)
    return Extraction(None, INVALID)


def _load_builtin() -> None:
    from . import choice, pairs, truefalse  # noqa: F401 - register the shared chains
