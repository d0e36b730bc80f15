"""Asking a checker agent about one instance, and recording its verdict on the instance.

Shared by every recipe whose agents check generated sentences: the verdict (or the reason
there is none) travels with the instance in its provenance; a check that yields no valid
verdict marks the instance `failed`, never silently accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from ..records import CheckVerdict
from .base import AgentContext, AgentResult, InstanceTask, point_vars


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
    result = await ctx.model.structured(
        template.render({**point_vars(point), "sentence": instance.text, **(extra or {})}),
        verdict_model,
        params=ctx.params,
        prompt_hash=template.hash,
        max_reasks=ctx.max_reasks,
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
