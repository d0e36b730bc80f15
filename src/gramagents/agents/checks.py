"""Checks on what agents write: one generated sentence's validators, and checker agents.

Shared by every recipe whose agents write or check sentences. A checker's verdict (or the reason
there is none) travels with the instance in its provenance; a check that yields no valid
verdict marks the instance `failed`, never silently accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel

from ..records import CheckVerdict
from .base import AgentContext, AgentResult, InstanceTask, normalise, point_vars

REPEATS = re.compile(r"(.{2,}?)\1{2,}")
"""Two or more characters said three times or more in a row: a model caught in a loop."""


def one_line(value: str, what: str = "sentence") -> str:
    """`value` stripped, when it is one non-empty line that does not loop.

    For the validators of agents' output models: the `ValueError` says what to fix, and the
    model is asked again with it.
    """
    text = value.strip()
    if not text:
        raise ValueError(f"the {what} is empty")
    if "\n" in text:
        raise ValueError(f"write the {what} on one line")
    if REPEATS.search(text):
        raise ValueError(f"the {what} repeats itself; write it once")
    return text


def given_reason(value: str) -> str:
    """`value` stripped, when there is one: a verdict or a label comes with its reason."""
    if not value.strip():
        raise ValueError("give a one-sentence reason")
    return value.strip()


Reason = Annotated[str, AfterValidator(given_reason)]
"""The type of an output model's `reason` field: a non-empty line, stripped."""


def not_copied(text: str, instructions: str) -> str:
    """`text`, unless it copies a piece of the instructions it was written from."""
    if len(normalise(text)) >= 4 and normalise(text) in normalise(instructions):
        raise ValueError("this copies the instructions; write a new sentence")
    return text


async def judge(
    task: InstanceTask,
    ctx: AgentContext,
    check: str,
    verdict_model: type[BaseModel],
    passes: Callable[[Any], bool],
    extra: dict[str, Any] | None = None,
) -> AgentResult:
    """Ask a checker about one instance and record its verdict (or its failure)."""
    instance, point = task.instance, task.point
    template = ctx.template(point.language)
    result = await ctx.ask(
        template, {**point_vars(point), "sentence": instance.text, **(extra or {})}, verdict_model
    )
    provenance = instance.provenance
    if result.value is None:
        note = f"{check} failed: {result.error}"
        failed = instance.model_copy(
            update={
                "status": "failed",
                "provenance": provenance.model_copy(update={"notes": [*provenance.notes, note]}),
            }
        )
        return AgentResult([failed], "failed", failure=result.error)
    verdict = result.value
    passed = passes(verdict)
    record = CheckVerdict(
        check=check,
        passed=passed,
        reason=getattr(verdict, "reason", ""),
        details=verdict.model_dump(),
        model=ctx.model.label,
        prompt_hash=template.hash,
    )
    judged = instance.model_copy(
        update={
            "status": "accepted" if passed else "rejected",
            "provenance": provenance.model_copy(update={"checks": [*provenance.checks, record]}),
        }
    )
    return AgentResult([judged], "accepted" if passed else "rejected")
