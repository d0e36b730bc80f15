"""The question back-checker: is the treebank's answer the only reading of the sentence?

The paper's caveat on prepositional-phrase attachment: "I hide the book on my shelf" can be
read with the phrase attached to "hide" or to "the book"; the treebank gives one reading, so
a model that takes the other is marked wrong. The back-checker asks a model, once per test
question's match (the True/False, Multiple Choice and Fill-in-the-Blank questions of one match
share the verdict), whether another phrase of the sentence could also be the answer. An
ambiguous question is flagged for review and keeps its verdict (`questions.jsonl`, and the
items' `meta.checks` and `meta.flags`); it stays in the bank unless the node's `remove` says
otherwise. A check that yields no valid verdict is recorded as failed, never as passed. With
`--agents off` nothing is asked: the build is deterministic.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    AgentTask,
    BuildView,
    CheckVerdict,
    Reason,
    agent,
    normalise,
)
from .records import SyntaxMatch, SyntaxQuestion

CHECK = "syntax-backcheck"


class BackcheckOptions(BaseModel):
    """Options of the back-checker node."""

    model_config = ConfigDict(extra="forbid")

    points: list[str] = Field(default_factory=lambda: ["PPA"])
    """The knowledge points whose questions are checked (the paper's caveat is PPA)."""
    remove: bool = False
    """Take questions found ambiguous out of the test set (they are flagged either way)."""


class AmbiguityVerdict(BaseModel):
    """The back-checker's answer."""

    ambiguous: bool = Field(
        description="True when another phrase of the sentence could also be a right answer."
    )
    other_answer: str = Field(
        default="", description="That other phrase, copied from the sentence; empty if none."
    )
    reason: Reason = Field(description="One sentence saying why.")

    @model_validator(mode="after")
    def _other_reading(self, info: ValidationInfo) -> AmbiguityVerdict:
        if not self.ambiguous:
            return self
        context = info.context or {}
        other = normalise(self.other_answer)
        if not other:
            raise ValueError("name the other phrase that could also be the answer")
        if other == normalise(context.get("answer", "")):
            raise ValueError("the other answer must differ from the given answer")
        if other not in normalise(context.get("sentence", "")):
            raise ValueError("copy the other answer from the sentence")
        return self


@dataclass(frozen=True, slots=True)
class MatchTask(AgentTask):
    """One match of a checked point, with the test questions asked of it."""

    match: SyntaxMatch
    questions: list[SyntaxQuestion]


def plan(view: BuildView, options: BaseModel) -> list[MatchTask]:
    """One call per match of the points checked, with the test questions asked of it.

    MVP's copies of a True/False question are among them: they share its verdict.
    """
    assert isinstance(options, BackcheckOptions)
    matches = {m.id: m for m in view.of_type(SyntaxMatch)}
    asked: dict[str, list[SyntaxQuestion]] = defaultdict(list)
    for question in view.of_type(SyntaxQuestion):
        match = matches.get(question.match_id)
        if question.role == "test" and match is not None and match.point in options.points:
            asked[question.match_id].append(question)
    return [MatchTask(matches[key], found) for key, found in asked.items()]


async def backcheck(task: MatchTask, ctx: AgentContext) -> AgentResult:
    """Ask whether the match's answer is the only reading; record the verdict on its questions."""
    match, questions = task.match, task.questions
    options = ctx.options
    assert isinstance(options, BackcheckOptions)
    template = ctx.template("en")
    sentence = questions[0].sentence
    variables = {"sentence": sentence, "question": questions[0].blank, "answer": match.answer}
    result = await ctx.ask(
        template,
        variables,
        AmbiguityVerdict,
        context={"sentence": sentence, "answer": match.answer},
    )
    if result.value is None:
        failed = CheckVerdict(
            check=CHECK,
            passed=False,
            reason=f"no valid verdict: {result.error}",
            model=ctx.model.label,
            prompt_hash=template.hash,
        )
        updated = [q.model_copy(update={"checks": [*q.checks, failed]}) for q in questions]
        return AgentResult(updated, "failed", failure=result.error)  # type: ignore[arg-type]
    verdict = result.value
    record = CheckVerdict(
        check=CHECK,
        passed=not verdict.ambiguous,
        reason=verdict.reason,
        details=verdict.model_dump(),
        model=ctx.model.label,
        prompt_hash=template.hash,
    )
    flag = [f"ambiguous: “{verdict.other_answer}” could also be the answer"]
    extra = flag if verdict.ambiguous else []
    updated = [
        q.model_copy(update={"checks": [*q.checks, record], "flags": [*q.flags, *extra]})
        for q in questions
    ]
    if not verdict.ambiguous:
        return AgentResult(updated, "unambiguous")  # type: ignore[arg-type]
    flags = {q.id: flag for q in questions}
    if options.remove:
        return AgentResult([], "ambiguous", removed=[q.id for q in questions], flags=flags)
    return AgentResult(updated, "ambiguous", flags=flags)  # type: ignore[arg-type]


agent(
    AgentSpec(
        name="syntax-backcheck",
        run=backcheck,
        plan=plan,
        options=BackcheckOptions,
        outcomes=("unambiguous", "ambiguous", "failed"),
        description="Flag questions whose answer another reading of the sentence would change.",
    )
)
