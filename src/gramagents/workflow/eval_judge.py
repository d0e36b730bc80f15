"""The eval graph's judge step: the rubric judges score the answers of judged tasks.

Every judge of the jury judges every judged answer, side by side; their verdicts are kept
apart and aggregated (judging/verdict.py `JuryVerdict`). Each judge's judgment has its own
cache key (the judge is part of it), so a resume asks no judge again what it already judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from ..judging.verdict import JuryVerdict, Verdict
from ..models.model import Model
from ..records import ChatRequest, GenParams, Item, Message
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate
from .eval_work import EvalContext, ItemWork

if TYPE_CHECKING:
    from ..judging.rubric import Rubric

T = TypeVar("T")
JUDGE_PARAMS = GenParams(temperature=0.0, max_tokens=384)
"""A judge's decoding (its spec's decoding options replace these, `Model.params`)."""


def task_input_of(item: Item, messages: list[Message]) -> str:
    """The task as the judge reads it: the item's `task_input`, else the prompt's last message."""
    return str(item.prompt.vars.get("task_input") or messages[-1].content)


async def judge_answers(work: list[ItemWork], ctx: EvalContext) -> None:
    """Give each answer of a judged task the jury's verdict (others are left as they are)."""
    if not ctx.judges:
        return  # nothing in this run is judged
    from ..judging.rubric import JUDGE_PROMPT

    template = ctx.templates[JUDGE_PROMPT]
    judged: list[ItemWork] = []
    jobs: list[Awaitable[JuryVerdict]] = []
    for entry in work:
        item, request, generation = entry.item, entry.request, entry.generation
        name = rubric_of(item, ctx.tasks)
        if name is None or generation is None or generation.error is not None:
            continue
        assert request is not None
        task_input = task_input_of(item, request.messages)
        judged.append(entry)
        jobs.append(
            _counted(
                judge_by_jury(
                    ctx.judges, ctx.jury, ctx.rubrics[name], task_input, generation.text, template
                ),
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


async def judge_by_jury(
    judges: list[Model],
    rule: str,
    rubric: Rubric,
    task_input: str,
    answer: str,
    template: PromptTemplate,
) -> JuryVerdict:
    """Every judge's verdict on one answer, asked side by side, and their aggregate."""
    verdicts = await asyncio.gather(
        *(judge_one(judge, rubric, task_input, answer, template) for judge in judges)
    )
    return JuryVerdict(list(verdicts), rule)


async def judge_one(
    judge: Model,
    rubric: Rubric,
    task_input: str,
    answer: str,
    template: PromptTemplate,
    sample: int = 0,
) -> Verdict:
    """One judgment: every dimension of the rubric scored at temperature 0.

    A total that does not add up is re-asked; the rubric's content hash is part of the
    request, hence of its cache key, so an edited rubric is judged afresh. `template` is the
    judge prompt, as the run loaded it. The reply is read without the graded text it repeats
    (judging/fence.py). `sample`: another index asks the same judgment again apart in the
    cache (`judge-check`'s repeat).
    """
    from ..judging.fence import fence_for, read_reply
    from ..judging.rubric import judge_messages, judgment_model

    fence = fence_for(task_input.strip(), answer.strip())
    outcome = await judge.structured(
        ChatRequest(
            messages=[
                Message.model_validate(m)
                for m in judge_messages(rubric, task_input, answer, template)
            ],
            params=JUDGE_PARAMS,
            prompt_hash=template.hash,
            rubric_hash=rubric.hash,
            sample=sample,
        ),
        judgment_model(rubric),
        screen=lambda reply: read_reply(reply, fence, (answer, task_input)),
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
