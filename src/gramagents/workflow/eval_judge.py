"""The eval graph's judge step: the rubric judge scores the answers of judged tasks."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ..judging.verdict import Verdict
from ..models.model import Model
from ..records import ChatRequest, GenParams, Message
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate
from .eval_work import EvalContext, ItemWork

if TYPE_CHECKING:
    from ..judging.rubric import Rubric

T = TypeVar("T")


async def judge_answers(work: list[ItemWork], ctx: EvalContext) -> None:
    """Give each answer of a judged task its verdict (others are left as they are)."""
    judge = ctx.judge
    if judge is None:
        return  # nothing in this run is judged
    from ..judging.rubric import JUDGE_PROMPT

    template = ctx.templates[JUDGE_PROMPT]
    judged: list[ItemWork] = []
    jobs: list[Awaitable[Verdict]] = []
    for entry in work:
        item, request, generation = entry.item, entry.request, entry.generation
        name = rubric_of(item, ctx.tasks)
        if name is None or generation is None or generation.error is not None:
            continue
        assert request is not None
        task_input = str(item.prompt.vars.get("task_input") or request.messages[-1].content)
        judged.append(entry)
        jobs.append(
            _counted(
                judge_one(judge, ctx.rubrics[name], task_input, generation.text, template),
                lambda count: ctx.tally("judged", count),
            )
        )
    for entry, verdict in zip(judged, await asyncio.gather(*jobs), strict=True):
        entry.verdict = verdict


async def _counted(job: Awaitable[T], count: Callable[[int], None]) -> T:
    """`job`'s result, counted once it returns."""
    result = await job
    count(1)
    return result


async def judge_one(
    judge: Model, rubric: Rubric, task_input: str, answer: str, template: PromptTemplate
) -> Verdict:
    """One judgment: every dimension of the rubric scored at temperature 0.

    A total that does not add up is re-asked; the rubric's content hash is part of the
    request, hence of its cache key, so an edited rubric is judged afresh. `template` is the
    judge prompt, as the run loaded it.
    """
    from ..judging.rubric import judge_messages, judgment_model

    outcome = await judge.structured(
        ChatRequest(
            messages=[
                Message.model_validate(m)
                for m in judge_messages(rubric, task_input, answer, template)
            ],
            params=GenParams(temperature=0.0, max_tokens=384),
            prompt_hash=template.hash,
            rubric_hash=rubric.hash,
        ),
        judgment_model(rubric),
    )
    verdict = Verdict(rubric.id, rubric.version, rubric.hash, rubric.scale, judge.label)
    if outcome.value is None:
        verdict.error = outcome.error or "no judgment"
        verdict.unreachable = outcome.unreachable
        verdict.interrupted = outcome.interrupted
        return verdict
    verdict.dimensions = outcome.value.dimension_scores()
    verdict.total = outcome.value.total_score()
    verdict.reason = getattr(outcome.value, "reason", "")
    return verdict
