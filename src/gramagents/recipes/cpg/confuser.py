"""Confusing-instance generator (CPG-EVAL §3.3, CON-INS).

For a grammar point it writes sentences that look or sound like the point but do not contain
it, of the two kinds the paper names: (a) `same-form`, identical words with another meaning
(会 the modal vs 会议 "meeting"), and (b) `partial-form`, a partial overlap of form (A着A着 vs
正忙着). Each comes back with its kind and a one-line reason. One call writes one sentence;
calls for one point differ by their index (the sample index and the sampling seed), so they
are cached apart.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ...agents.base import (
    AgentContext,
    AgentResult,
    AgentSpec,
    PointTask,
    agent,
    normalise,
    point_vars,
    points_of,
)
from ...records import Instance, Provenance
from ...workflow.nodes import BuildView

Kind = Literal["same-form", "partial-form"]
_REPEATS = re.compile(r"(.{2,}?)\1{2,}")


class ConfuserOptions(BaseModel):
    """How many confusing instances to write, and of which kinds."""

    model_config = ConfigDict(extra="forbid")

    per_point: int = Field(default=10, ge=1)
    """Confusing instances wanted per point, counting those the table already has."""
    kinds: list[Kind] = Field(default=["same-form", "partial-form"], min_length=1)
    """Kinds asked for, in turn."""


class ConfusingInstance(BaseModel):
    """The generator's answer."""

    sentence: str = Field(description="A natural sentence that does not contain the point.")
    kind: Kind = Field(description="same-form or partial-form")
    reason: str = Field(description="One line: how it resembles the point and why it is not it.")

    @field_validator("sentence")
    @classmethod
    def one_new_sentence(cls, value: str, info: ValidationInfo) -> str:
        """One line, not an example of the point, not the instructions, not a loop."""
        text = value.strip()
        if not text:
            raise ValueError("the sentence is empty")
        if "\n" in text:
            raise ValueError("write exactly one sentence, on one line")
        context = info.context or {}
        if normalise(text) in {normalise(s) for s in context.get("examples", [])}:
            raise ValueError("this is one of the point's own examples; it contains the point")
        if len(normalise(text)) >= 4 and normalise(text) in normalise(context.get("prompt", "")):
            raise ValueError("this copies the instructions; write a new sentence")
        if _REPEATS.search(text):
            raise ValueError("this repeats itself; write one natural sentence")
        return text

    @field_validator("reason")
    @classmethod
    def has_reason(cls, value: str) -> str:
        """The kind comes with its reason."""
        if not value.strip():
            raise ValueError("give a one-line reason")
        return value.strip()


def plan(view: BuildView, options: BaseModel) -> list[PointTask]:
    """Enough calls per point to reach `per_point` confusing instances."""
    assert isinstance(options, ConfuserOptions)
    have: dict[str, int] = {}
    for instance in view.of_type(Instance):
        if instance.kind == "confuser" and instance.status == "accepted":
            have[instance.point_id] = have.get(instance.point_id, 0) + 1
    return [
        PointTask(point, index)
        for point in points_of(view)
        for index in range(max(0, options.per_point - have.get(point.id, 0)))
    ]


async def generate(task: PointTask, ctx: AgentContext) -> AgentResult:
    """Write one confusing instance for a point (or record why none came back)."""
    point, index = task.point, task.index
    options = ctx.options
    assert isinstance(options, ConfuserOptions)
    kind = options.kinds[index % len(options.kinds)]
    template = ctx.template(point.language)
    messages = template.render(
        {**point_vars(point), "examples": point.examples, "kind": kind, "index": index}
    )
    params = ctx.params.model_copy(update={"seed": index})
    result = await ctx.model.structured(
        messages,
        ConfusingInstance,
        params=params,
        prompt_hash=template.hash,
        context={"examples": point.examples, "prompt": messages[-1].content},
        max_reasks=ctx.max_reasks,
        sample=index,
    )
    provenance = Provenance(
        source=point.source,
        agent="confusing-instance-generator",
        model=ctx.model.label,
        prompt_hash=template.hash,
    )
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    value = result.value
    instance = Instance(
        id=f"{point.id}/cf-gen/{index}",
        point_id=point.id,
        text=value.sentence,
        kind="confuser",
        origin="agent",
        provenance=provenance,
        annotations={"confusion": value.kind, "asked_for": kind, "reason": value.reason},
    )
    return AgentResult([instance], "generated")


agent(
    AgentSpec(
        name="confusing-instance-generator",
        run=generate,
        plan=plan,
        options=ConfuserOptions,
        description="Write sentences that look like a grammar point but do not contain it.",
    )
)
