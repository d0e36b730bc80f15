"""The back-checker asked about distractors (Twin Forge, for the Proof Stand's wrong options).

Tasks 1-3 offer other points, and other points' sentences, as wrong options. A sentence
written for one point often uses another as well (a verb-second sentence with a plural noun),
and then that other point is no wrong option for it. With agents on, `distractor-check` asks
the back-checker (the same prompt and verdict as `sentence-backcheck`) whether other points
apply to each accepted sentence: the `candidates` points likeliest to (their book examples
and descriptions share the most words with the sentence and its translation), or every other
point when `candidates` is null. It also asks whether each minimal pair's ungrammatical twin
is grammatical after all (`twins`). Each answer is a `PointCheck` in `point_checks.jsonl`;
the bank builder never offers a point that applies as a wrong option (`distractors.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    BuildView,
    GrammarPoint,
    Instance,
    InstanceTask,
    agent,
    point_vars,
)
from .forge import BACKCHECK, SentenceVerdict
from .records import PointCheck, book_language

_WORD = re.compile(r"\w{3,}", re.UNICODE)


class CrossCheckOptions(BaseModel):
    """What the back-checker is asked about the wrong options."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    candidates: int | None = Field(default=2, ge=0)
    """Other points asked about per sentence, likeliest first (null: every other point)."""
    twins: bool = True
    """Also ask whether each minimal pair's twin is grammatical after all."""


def _words(*texts: str) -> set[str]:
    return {w.casefold() for text in texts for w in _WORD.findall(text)}


def affinity(sentence: Instance, point: GrammarPoint) -> int:
    """Words a point's examples, name and description share with a sentence and its English."""
    english = str(sentence.annotations.get("english", ""))
    return len(_words(sentence.text) & _words(*point.examples)) + len(
        _words(english) & _words(point.name, point.description)
    )


def _accepted(view: BuildView, kind: str) -> list[Instance]:
    return [i for i in view.of_type(Instance) if i.kind == kind and i.status == "accepted"]


@dataclass(frozen=True, slots=True)
class CrossCheckTask(InstanceTask):
    """Whether `point` applies to a sentence (`kind` distractor), or a twin is grammatical."""

    kind: str
    language: str


def plan_checks(view: BuildView, options: BaseModel) -> list[CrossCheckTask]:
    """Per accepted sentence its likeliest other points; per twin its own point."""
    assert isinstance(options, CrossCheckOptions)
    points = {p.id: p for p in view.of_type(GrammarPoint)}
    language = book_language(view.context)
    tasks: list[CrossCheckTask] = []
    for sentence in _accepted(view, "example"):
        if sentence.point_id not in points:
            continue
        others = [p for k, p in sorted(points.items()) if k != sentence.point_id]
        others.sort(key=lambda p: -affinity(sentence, p))  # stable: ties in id order
        chosen = others if options.candidates is None else others[: options.candidates]
        tasks += [CrossCheckTask(sentence, p, "distractor", language) for p in chosen]
    if options.twins:
        tasks += [
            CrossCheckTask(twin, points[twin.point_id], "twin", language)
            for twin in _accepted(view, "pair")
            if twin.point_id in points
        ]
    return tasks


async def cross_check(task: CrossCheckTask, ctx: AgentContext) -> AgentResult:
    """Ask whether a point applies to a sentence (or whether a twin is grammatical)."""
    instance, point = task.instance, task.point
    template = ctx.template("en")
    variables = {
        **point_vars(point),
        "sentence": instance.text,
        "language": task.language,
        "english": instance.annotations.get("english", ""),
    }
    result = await ctx.ask(template, variables, SentenceVerdict)
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    verdict: Any = result.value
    twin = task.kind == "twin"
    applies = bool(verdict.grammatical if twin else verdict.instantiates_point)
    check = PointCheck(
        id=f"{instance.id}|{point.id}",
        sentence_id=instance.id,
        point_id=point.id,
        kind=task.kind,
        applies=applies,
        reason=verdict.reason,
        model=ctx.model.label,
        prompt_hash=template.hash,
    )
    if twin:
        return AgentResult([check], "twin_grammatical" if applies else "twin_wrong")
    return AgentResult([check], "applies" if applies else "clear")


agent(
    AgentSpec(
        name="distractor-check",
        run=cross_check,
        plan=plan_checks,
        options=CrossCheckOptions,
        outcomes=("clear", "applies", "twin_wrong", "twin_grammatical", "failed"),
        description=f"The back-checker ({BACKCHECK}'s prompt) on the wrong options (§3.2).",
    )
)
