"""Minimal-pair agents for the GEC recipe (CTSEG §3.2, with agents in the annotators' place).

The generator writes, for a grammar item, one learner-like ungrammatical sentence with exactly
one error tied to the item (Step 2), its correction that uses the item (the Step 2
reference), and the other valid corrections that do not depend on the item (Step 3). The
back-checker holds a pair to the paper's four rules; a pair passes only if it meets all four.
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ... import api

MAX_WORD_EDITS = 5


class PairOptions(BaseModel):
    """How many pairs each grammar item should have."""

    model_config = ConfigDict(extra="forbid")

    per_item: int = Field(default=3, ge=1)
    """Pairs wanted per item (the paper's three), counting the source's own."""


class MinimalPairDraft(BaseModel):
    """The generator's answer."""

    ungrammatical: str = Field(description="A learner's sentence with one error on the item.")
    correction: str = Field(description="The corrected sentence, using the grammar item.")
    alternatives: list[str] = Field(
        default_factory=list,
        description="Other correct versions that do not use the grammar item (may be empty).",
    )

    @field_validator("ungrammatical", "correction")
    @classmethod
    def sentence(cls, value: str, info: ValidationInfo) -> str:
        """One line each."""
        return api.one_line(value, info.field_name or "sentence")

    @field_validator("alternatives")
    @classmethod
    def alternative_lines(cls, value: list[str]) -> list[str]:
        """One line each, no repeats."""
        lines = [api.one_line(v, "alternative") for v in value if v.strip()]
        return list(dict.fromkeys(lines))

    @model_validator(mode="after")
    def minimal(self) -> MinimalPairDraft:
        """A minimal pair: the correction differs from the sentence, and only a little."""
        if api.normalise(self.ungrammatical) == api.normalise(self.correction):
            raise ValueError("the correction must differ from the ungrammatical sentence")
        wrong, right = self.ungrammatical.split(), self.correction.split()
        changed = sum(
            max(i2 - i1, j2 - j1)
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=wrong, b=right).get_opcodes()
            if op != "equal"
        )
        if changed > MAX_WORD_EDITS:
            raise ValueError(
                f"the correction changes {changed} words; a minimal pair has one "
                f"error, so change at most {MAX_WORD_EDITS}"
            )
        self.alternatives = [
            a
            for a in self.alternatives
            if api.normalise(a)
            not in {api.normalise(self.ungrammatical), api.normalise(self.correction)}
        ]
        return self


class PairVerdict(BaseModel):
    """The back-checker's answer, rule by rule."""

    error_limited_to_item: bool = Field(description="Rule 1: the only error is on the item.")
    alternatives_complete: bool = Field(
        description="Rule 2: every other valid correction is among the alternatives."
    )
    learner_style: bool = Field(description="Rule 3: simple sentences in a learner's style.")
    common_error: bool = Field(description="Rule 4: a mistake learners commonly make.")
    reason: api.Reason = Field(description="One sentence saying why.")


def plan(view: api.BuildView, options: BaseModel) -> list[api.PointTask]:
    """Enough calls per item to reach `per_item` pairs."""
    assert isinstance(options, PairOptions)
    return api.calls_to_reach(view, "pair", options.per_item)


async def generate(task: api.PointTask, ctx: api.AgentContext) -> api.AgentResult:
    """Write one minimal pair for a grammar item."""
    point, index = task.point, task.index
    template = ctx.template(point.language)
    variables = {
        **api.point_vars(point),
        "index": index,
        "examples": [p.model_dump() for p in point.pairs],
    }
    result = await ctx.ask(template, variables, MinimalPairDraft, sample=index)
    if result.value is None:
        return api.AgentResult([], "failed", failure=result.error)
    draft = result.value
    return api.AgentResult(
        [
            api.Instance(
                id=f"{point.id}/pair-gen/{index}",
                point_id=point.id,
                text=draft.ungrammatical,
                kind="pair",
                origin="agent",
                annotations={"correction": draft.correction, "alternatives": draft.alternatives},
                provenance=ctx.made_by("minimal-pair-generator", template, point.source),
            )
        ],
        "generated",
    )


async def backcheck(task: api.InstanceTask, ctx: api.AgentContext) -> api.AgentResult:
    """Hold a generated pair to the four rules."""
    instance = task.instance
    pair_vars = {
        "correction": instance.annotations.get("correction", ""),
        "alternatives": instance.annotations.get("alternatives", []),
    }
    return await api.judge_instance(
        task,
        ctx,
        "pair-backcheck",
        PairVerdict,
        lambda v: (
            v.error_limited_to_item
            and v.alternatives_complete
            and v.learner_style
            and v.common_error
        ),
        extra=pair_vars,
    )


api.agent(
    api.AgentSpec(
        name="minimal-pair-generator",
        run=generate,
        plan=plan,
        options=PairOptions,
        description="Write learner-like minimal pairs for a grammar item.",
    )
)
api.agent(
    api.AgentSpec(
        name="pair-backcheck",
        run=backcheck,
        plan=api.per_instance(
            lambda i: i.origin == "agent" and i.kind == "pair" and i.status == "accepted"
        ),
        description="Hold a minimal pair to CTSEG's four rules.",
    )
)
