"""Instance rewriter (CPG-EVAL §3.2.2): a new sentence in the mould of an expert example.

The paper rewrites each expert example into a synthetic sentence "equivalent to expert data in
terms of its relationship to grammar items". The rewrite must keep the grammar point, which
the back-checker verifies; here the output model only holds it to being one new sentence.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    Instance,
    InstanceTask,
    agent,
    normalise,
    not_copied,
    one_line,
    per_instance,
    point_vars,
)


class RewrittenSentence(BaseModel):
    """The rewriter's answer."""

    sentence: str = Field(description="The new sentence, which uses the same grammar point.")

    @field_validator("sentence")
    @classmethod
    def one_new_sentence(cls, value: str, info: ValidationInfo) -> str:
        """One non-empty line that is not the example itself."""
        text = one_line(value)
        context = info.context or {}
        original = context.get("original", "")
        if original and normalise(text) == normalise(original):
            raise ValueError("this repeats the example; write a different sentence")
        if original and len(text) > 3 * len(original) + 20:
            raise ValueError("this is far longer than the example; write one sentence")
        return not_copied(text, context.get("prompt", "").replace(original, ""))


async def rewrite(task: InstanceTask, ctx: AgentContext) -> AgentResult:
    """Rewrite a source example; on failure the source instance carries the reason."""
    instance, point = task.instance, task.point
    template = ctx.template(point.language)
    result = await ctx.ask(
        template,
        {**point_vars(point), "sentence": instance.text},
        RewrittenSentence,
        context={"original": instance.text},
    )
    if result.value is None:
        note = f"instance-rewriter failed: {result.error}"
        updated = instance.model_copy(
            update={
                "provenance": instance.provenance.model_copy(
                    update={"notes": [*instance.provenance.notes, note]}
                )
            }
        )
        return AgentResult([updated], "failed", failure=result.error)
    rewritten = Instance(
        id=f"{instance.id}/rw",
        point_id=instance.point_id,
        text=result.value.sentence,
        kind=instance.kind,
        origin="agent",
        replaces=instance.id,
        source_text=instance.text,
        provenance=ctx.made_by("instance-rewriter", template, instance.provenance.source),
    )
    return AgentResult([rewritten], "rewritten")


agent(
    AgentSpec(
        name="instance-rewriter",
        run=rewrite,
        plan=per_instance(lambda i: i.origin == "source" and i.kind == "example"),
        description="Rewrite each expert example into a new sentence with the same grammar point.",
    )
)
