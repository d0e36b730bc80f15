"""EduEval's bank builder (§4): zero-shot and few-shot items per task, in the order read."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...records import Item, PromptParts
from ...tasks.registry import BankBuilderSpec, BuildResources, bank_builder
from ...workflow.nodes import BuildView
from .filters import mc_vars
from .sources import EduItem

TASK_OF_SHAPE = {
    "mc": ("EDU-MC", "edu/mc.md"),
    "mc_multi": ("EDU-MC-MULTI", "edu/mc-multi.md"),
    "dialogue": ("EDU-DIALOGUE", "edu/dialogue.md"),
    "essay": ("EDU-ESSAY", "edu/essay.md"),
    "poetry": ("EDU-TEXT", "edu/open.md"),
    "reading": ("EDU-TEXT", "edu/open.md"),
    "question_generation": ("EDU-QG", "edu/open.md"),
    "teaching_design": ("EDU-TD", "edu/open.md"),
    "text_writing": ("EDU-TW", "edu/open.md"),
}
ZERO_SHOT_ONLY = ("question_generation", "teaching_design")
"""Open tasks without worked examples to show."""


class BankOptions(BaseModel):
    """Options of the EduEval bank builder."""

    model_config = ConfigDict(extra="forbid")

    shots: list[int] = Field(default_factory=lambda: [0, 3])
    """Banks to make: zero-shot (0) and with this many worked examples (`<TASK>-<n>SHOT`)."""


class TaskOptions(BaseModel):
    """A task of the EduEval builder (it has no parameters of its own)."""

    model_config = ConfigDict(extra="forbid")


def build(
    view: BuildView, tasks: dict[str, BaseModel], options: BaseModel, resources: BuildResources
) -> list[Item]:
    """Items of the requested tasks, zero-shot first, then each few-shot setting."""
    assert isinstance(options, BankOptions)
    items = view.of_type(EduItem)
    by_source: dict[tuple[str, str], list[EduItem]] = defaultdict(list)
    for item in items:
        by_source[item.level, item.shape].append(item)  # examples: same level, same shape
    rng = random.Random(resources.seed)
    dataset: list[Item] = []
    for shots in options.shots:
        for item in items:
            task, template = TASK_OF_SHAPE[item.shape]
            if task not in tasks:
                continue
            examples: list[dict[str, Any]] = []
            if shots:
                pool = [
                    o for o in by_source[item.level, item.shape] if o.id != item.id and o.answer
                ]
                if item.shape in ZERO_SHOT_ONLY or len(pool) < shots:
                    continue  # no worked examples to show: zero-shot only
                examples = [_shot(o) for o in rng.sample(pool, shots)]
            dataset.append(_item(item, task, template, shots, examples, view.flags))
    return dataset


def _item(
    item: EduItem,
    task: str,
    template: str,
    shots: int,
    examples: list[dict[str, Any]],
    flags: dict[str, list[str]],
) -> Item:
    return Item(
        id=f"{item.id}@{shots}shot",
        task=task if not shots else f"{task}-{shots}SHOT",
        prompt=PromptParts(template=template, vars=_vars(item, examples)),
        answer=_gold(item),
        meta={
            "level": item.level,
            "subject": item.subject,
            "grade": item.grade,
            "source_task": item.task,
            "shape": item.shape,
            "shots": shots,
            "difficulty": item.difficulty,
            "options": item.options,
            "route": item.route,
            "flags": flags.get(item.id, []),
            "source": item.source,
        },
    )


def _gold(item: EduItem) -> Any:
    if item.shape in ("question_generation", "teaching_design", "text_writing"):
        return None  # judged with a rubric
    if item.shape in ("dialogue", "essay"):
        return int(item.answer)
    return item.answer


def _vars(item: EduItem, shots: list[dict[str, Any]]) -> dict[str, Any]:
    if item.shape in ("mc", "mc_multi"):
        return mc_vars(item, shots)
    if item.shape == "dialogue":
        return {"dialogue": item.prompt, "shots": shots}
    if item.shape == "essay":
        return {"question": item.raw.get("question", ""), "essay": item.prompt, "shots": shots}
    return {"prompt": item.prompt, "shots": shots, "task_input": item.prompt}


def _shot(item: EduItem) -> dict[str, Any]:
    if item.shape in ("mc", "mc_multi"):
        text = item.prompt + "\n" + "\n".join(f"{k}. {v}" for k, v in (item.options or {}).items())
        return {"prompt": text, "answer": item.answer}
    if item.shape == "essay":
        return {"prompt": item.raw.get("question", ""), "answer": item.answer}
    return {"prompt": item.prompt, "answer": item.answer}


bank_builder(
    BankBuilderSpec(
        name="edu",
        build=build,
        task_params={task: TaskOptions for task, _ in TASK_OF_SHAPE.values()},
        options=BankOptions,
    )
)
