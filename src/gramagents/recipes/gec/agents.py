"""Minimal-pair agents for the GEC recipe (CTSEG §3.2, with agents in the annotators' place).

The generator writes, for a grammar item, one learner-like ungrammatical sentence with exactly
one error tied to the item (Step 2), its correction that uses the item (the Step 2
reference), and the other valid corrections that do not depend on the item (Step 3). The
back-checker holds a pair to the paper's four rules; a pair passes only if it meets all four.
"""

from __future__ import annotations

import difflib
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ...agents.base import (
    AgentContext,
    AgentResult,
    AgentSpec,
    InstanceTask,
    PointTask,
    agent,
    normalise,
    per_instance,
    point_vars,
    points_of,
)
from ...agents.checks import judge
from ...records import Instance, Provenance
from ...workflow.nodes import BuildView

MAX_WORD_EDITS = 5
_REPEATS = re.compile(r"(.{2,}?)\1{2,}")


class PairOptions(BaseModel):
    """How many pairs each grammar item should have."""

    model_config = ConfigDict(extra="forbid")

    per_item: int = Field(default=3, ge=1)
    """Pairs wanted per item (the paper's three), counting the source's own."""


def _one_line(value: str, what: str) -> str:
    text = value.strip()
    if not text:
        raise ValueError(f"the {what} is empty")
    if "\n" in text:
        raise ValueError(f"write the {what} on one line")
    if _REPEATS.search(text):
        raise ValueError(f"the {what} repeats itself")
    return text


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
        return _one_line(value, info.field_name or "sentence")

    @field_validator("alternatives")
    @classmethod
    def alternative_lines(cls, value: list[str]) -> list[str]:
        """One line each, no repeats."""
        lines = [_one_line(v, "alternative") for v in value if v.strip()]
        return list(dict.fromkeys(lines))

    @model_validator(mode="after")
    def minimal(self) -> MinimalPairDraft:
        """A minimal pair: the correction differs from the sentence, and only a little."""
        if normalise(self.ungrammatical) == normalise(self.correction):
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
            if normalise(a) not in {normalise(self.ungrammatical), normalise(self.correction)}
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
    reason: str = Field(description="One sentence saying why.")

    @field_validator("reason")
    @classmethod
    def has_reason(cls, value: str) -> str:
        """A verdict comes with its reason."""
        if not value.strip():
            raise ValueError("give a one-sentence reason")
        return value.strip()


def plan(view: BuildView, options: BaseModel) -> list[PointTask]:
    """Enough calls per item to reach `per_item` pairs."""
    assert isinstance(options, PairOptions)
    have: dict[str, int] = {}
    for instance in view.of_type(Instance):
        if instance.kind == "pair" and instance.status == "accepted":
            have[instance.point_id] = have.get(instance.point_id, 0) + 1
    return [
        PointTask(point, index)
        for point in points_of(view)
        for index in range(max(0, options.per_item - have.get(point.id, 0)))
    ]


async def generate(task: PointTask, ctx: AgentContext) -> AgentResult:
    """Write one minimal pair for a grammar item."""
    point, index = task.point, task.index
    template = ctx.template(point.language)
    messages = template.render(
        {**point_vars(point), "index": index, "examples": [p.model_dump() for p in point.pairs]}
    )
    result = await ctx.model.structured(
        messages,
        MinimalPairDraft,
        params=ctx.params.model_copy(update={"seed": index}),
        prompt_hash=template.hash,
        max_reasks=ctx.max_reasks,
        sample=index,
    )
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    draft = result.value
    return AgentResult(
        [
            Instance(
                id=f"{point.id}/pair-gen/{index}",
                point_id=point.id,
                text=draft.ungrammatical,
                kind="pair",
                origin="agent",
                annotations={"correction": draft.correction, "alternatives": draft.alternatives},
                provenance=Provenance(
                    source=point.source,
                    agent="minimal-pair-generator",
                    model=ctx.model.label,
                    prompt_hash=template.hash,
                ),
            )
        ],
        "generated",
    )


async def backcheck(task: InstanceTask, ctx: AgentContext) -> AgentResult:
    """Hold a generated pair to the four rules."""
    instance = task.instance
    pair_vars = {
        "correction": instance.annotations.get("correction", ""),
        "alternatives": instance.annotations.get("alternatives", []),
    }
    return await judge(
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


agent(
    AgentSpec(
        name="minimal-pair-generator",
        run=generate,
        plan=plan,
        options=PairOptions,
        description="Write learner-like minimal pairs for a grammar item.",
    )
)
agent(
    AgentSpec(
        name="pair-backcheck",
        run=backcheck,
        plan=per_instance(
            lambda i: i.origin == "agent" and i.kind == "pair" and i.status == "accepted"
        ),
        description="Hold a minimal pair to CTSEG's four rules.",
    )
)
