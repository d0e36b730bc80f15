"""Confusing-instance generator (CPG-EVAL §3.3, CON-INS).

For a grammar point it writes sentences that look or sound like the point but do not contain
it, of the two kinds the paper names: (a) `same-form`, identical words with another meaning
(会 the modal vs 会议 "meeting"), and (b) `partial-form`, a partial overlap of form (A着A着 vs
正忙着). Each comes back with its kind and a one-line reason. One call writes one sentence;
calls for one point differ by their index (the sample index and the sampling seed), so they
are cached apart.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ... import api

Kind = Literal["same-form", "partial-form"]


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
    reason: api.Reason = Field(
        description="One line: how it resembles the point and why it is not it."
    )

    @field_validator("sentence")
    @classmethod
    def one_new_sentence(cls, value: str, info: ValidationInfo) -> str:
        """One line, not an example of the point, not the instructions, not a loop."""
        text = api.one_line(value)
        context = info.context or {}
        if api.normalise(text) in {api.normalise(s) for s in context.get("examples", [])}:
            raise ValueError("this is one of the point's own examples; it contains the point")
        return api.not_copied(text, context.get("prompt", ""))


def plan(view: api.BuildView, options: BaseModel) -> list[api.PointTask]:
    """Enough calls per point to reach `per_point` confusing instances."""
    assert isinstance(options, ConfuserOptions)
    return api.calls_to_reach(view, "confuser", options.per_point)


async def generate(task: api.PointTask, ctx: api.AgentContext) -> api.AgentResult:
    """Write one confusing instance for a point (or record why none came back)."""
    point, index = task.point, task.index
    options = ctx.options
    assert isinstance(options, ConfuserOptions)
    kind = options.kinds[index % len(options.kinds)]
    template = ctx.template(point.language)
    variables = {**api.point_vars(point), "examples": point.examples, "kind": kind, "index": index}
    result = await ctx.ask(
        template, variables, ConfusingInstance, sample=index, context={"examples": point.examples}
    )
    provenance = ctx.made_by("confusing-instance-generator", template, point.source)
    if result.value is None:
        return api.AgentResult([], "failed", failure=result.error)
    value = result.value
    instance = api.Instance(
        id=f"{point.id}/cf-gen/{index}",
        point_id=point.id,
        text=value.sentence,
        kind="confuser",
        origin="agent",
        provenance=provenance,
        annotations={"confusion": value.kind, "asked_for": kind, "reason": value.reason},
    )
    return api.AgentResult([instance], "generated")


api.agent(
    api.AgentSpec(
        name="confusing-instance-generator",
        run=generate,
        plan=plan,
        options=ConfuserOptions,
        description="Write sentences that look like a grammar point but do not contain it.",
    )
)
