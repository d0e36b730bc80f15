"""The items an eval covers, and what the run needs to know of them, gathered in one pass."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError
from ..records import Item
from ..sources.datasets import Dataset
from ..tasks import TaskSpec, get_task
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate, load_prompt


@dataclass
class Selection:
    """The items in scope and what the run needs to know of them, gathered in one pass."""

    items: list[Item]
    tasks: dict[str, TaskSpec]
    """The specs of the items' tasks."""
    per_task: dict[str, int]
    templates: dict[str, PromptTemplate]
    """Prompt templates the items use, by name (sorted), each loaded once for the run."""
    pair_tasks: list[str]
    """Tasks that compare log-likelihoods, sorted."""
    rubrics: list[str]
    """Rubrics the judged items' answers are scored with, sorted."""
    no_gold: dict[str, int]
    """Per task: items without a gold answer and without a rubric."""
    random_baselines: dict[str, float]
    conditioning: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task, how its sentences are scored (pair_conditioning.py)."""


def select_items(dataset: Dataset, limit: int | None) -> Selection:
    """Items in scope (at most `limit` per task), their tasks' specs and the run's tallies.

    One pass keeps the items in scope, in dataset order, grouped by task, and notes what the
    tallies need of each item while it is at hand; the baselines are then taken task by task.
    """
    tasks: dict[str, TaskSpec] = {}
    groups: dict[str, list[Item]] = {}
    chosen: list[Item] = []
    templates: set[str] = set()
    rubrics: set[str] = set()
    no_gold: dict[str, int] = {}
    for item in dataset.items:
        group = groups.get(item.task)
        if group is None:
            spec = get_task(item.task)
            if spec is None:
                raise InputError(
                    dataset.path,
                    f"unknown task '{item.task}' (item '{item.id}')",
                    line=dataset.lines.get(item.id),
                    field="task",
                )
            tasks[item.task] = spec
            group = groups[item.task] = []
        if limit is not None and len(group) >= limit:
            continue
        group.append(item)
        chosen.append(item)
        templates.add(item.prompt.template)
        rubric = rubric_of(item, tasks)
        if rubric:
            rubrics.add(rubric)
        elif item.answer is None:
            no_gold[item.task] = no_gold.get(item.task, 0) + 1
    baselines = {
        name: mean
        for name, group in groups.items()
        if (mean := tasks[name].random_mean(group)) is not None
    }
    per_task = {name: len(group) for name, group in groups.items() if group}
    return Selection(
        items=chosen,
        tasks=tasks,
        per_task=per_task,
        templates={name: load_prompt(name) for name in sorted(templates)},
        pair_tasks=sorted(t for t in per_task if tasks[t].mode == "loglikelihood"),
        rubrics=sorted(rubrics),
        no_gold=no_gold,
        random_baselines=baselines,
    )
