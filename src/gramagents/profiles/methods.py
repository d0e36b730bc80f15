"""Which method measures each competence of each model.

The first the suite accepts that the model supports. Only minimal pairs have a choice:
`loglik` (their log-probabilities compared) needs a model that gives log-probabilities of a
prompt (a local model, or a server with `/v1/completions` and echo), which is probed once per
model before anything runs; `choice` (a forced choice in both orders) any model that answers a
prompt. A competence that no accepted method can measure for a model is *not measured*, with
the reason, and its minimal pairs are left out of that model's evals; the rest of the profile
goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import NoLoglikelihood
from ..models import BackendSettings, create_backend
from ..workflow.pair_methods import CHOICE, DESCRIBED, LOGLIK, NONE
from .suite import Suite

NO_LOGLIK = "its backend gives no log-probabilities of a prompt"


async def supported_methods(specs: list[str], settings: BackendSettings) -> dict[str, str | None]:
    """Per model spec, None when it gives prompt log-probabilities, else why not.

    A server that cannot be reached stops here, as an eval would.
    """
    found: dict[str, str | None] = {}
    for spec in specs:
        backend = create_backend(spec, settings)
        try:
            if not backend.supports_loglikelihood:
                found[spec] = NO_LOGLIK
                continue
            await backend.check_loglikelihood()
            found[spec] = None
        except NoLoglikelihood as exc:
            found[spec] = str(exc)
        finally:
            await backend.aclose()
    return found


@dataclass
class ModelMethods:
    """How one model's minimal pairs are asked in a profile."""

    competences: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per competence with minimal pairs: `method` (`loglik`, `choice`, or None: not
    measured), `described`, and `reason` when not measured."""
    tasks: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task of the suite: `loglik`, `choice` or `none` (left out)."""

    @property
    def key(self) -> tuple[tuple[str, str], ...]:
        """What the models that can share an eval have in common."""
        return tuple(sorted(self.tasks.items()))

    def folder_suffix(self) -> str:
        """How this model's eval folders differ from the log-probability ones (`+choice`)."""
        used = sorted(set(self.tasks.values()) - {LOGLIK})
        return "".join(f"+{m}" for m in sorted(set(self.tasks.values()))) if used else ""


def choose(suite: Suite, loglik_refused: str | None) -> ModelMethods:
    """The methods of one model: per competence, the first accepted one it supports."""
    chosen = ModelMethods()
    for name, methods in suite.methods().items():
        why = {LOGLIK: loglik_refused, CHOICE: None}
        method = next((m for m in methods if why[m] is None), None)
        entry: dict[str, Any] = {"method": method, "accepted": methods}
        if method is None:
            refused = "; ".join(f"{DESCRIBED[m]}: {why[m]}" for m in methods)
            entry["reason"] = f"the suite accepts {_listed(methods)} only ({refused})"
        else:
            entry["described"] = DESCRIBED[method]
        chosen.competences[name] = entry
        for task in suite.competences[name].pair_tasks():
            chosen.tasks[task] = method or NONE
    return chosen


def _listed(methods: list[str]) -> str:
    return " or ".join(DESCRIBED[m] for m in methods)
