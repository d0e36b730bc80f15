"""Back-checkers: a generated sentence is kept only when a checker agent says it fits.

- `instance-backcheck`: a rewritten example must contain its grammar point and be natural.
- `confuser-backcheck`: a confusing instance must *not* contain the point, and be natural.

Rejected sentences are kept with the verdict; a check that yields no valid verdict marks the
sentence `failed` (it is not silently accepted).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    Instance,
    InstanceTask,
    Reason,
    agent,
    judge_instance,
    per_instance,
)


class InstanceVerdict(BaseModel):
    """The example checker's answer."""

    contains_point: bool = Field(description="The sentence contains the grammar point.")
    natural: bool = Field(description="The sentence is grammatical and natural.")
    reason: Reason = Field(description="One sentence saying why.")


class ConfuserVerdict(BaseModel):
    """The confusing-instance checker's answer."""

    point_absent: bool = Field(description="The sentence does NOT contain the grammar point.")
    natural: bool = Field(description="The sentence is grammatical and natural.")
    reason: Reason = Field(description="One sentence saying why.")


async def backcheck(task: InstanceTask, ctx: AgentContext) -> AgentResult:
    """Check one generated example."""
    return await judge_instance(
        task, ctx, "instance-backcheck", InstanceVerdict, lambda v: v.contains_point and v.natural
    )


async def confuser_backcheck(task: InstanceTask, ctx: AgentContext) -> AgentResult:
    """Check one generated confusing instance."""
    return await judge_instance(
        task, ctx, "confuser-backcheck", ConfuserVerdict, lambda v: v.point_absent and v.natural
    )


def _generated(kind: str) -> Callable[[Instance], bool]:
    return lambda i: i.origin == "agent" and i.kind == kind and i.status == "accepted"


agent(
    AgentSpec(
        name="instance-backcheck",
        run=backcheck,
        plan=per_instance(_generated("example")),
        description="Check that a generated sentence contains its grammar point and is natural.",
    )
)
agent(
    AgentSpec(
        name="confuser-backcheck",
        run=confuser_backcheck,
        plan=per_instance(_generated("confuser")),
        description="Check that a confusing instance does not contain the point and is natural.",
    )
)
