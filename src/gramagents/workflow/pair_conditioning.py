"""Which conditioning each minimal-pair task of an eval is scored with (models/conditioning.py).

`--conditioning` decides for every minimal-pair task; without it, a task's items decide when
they name one (`prompt.vars.conditioning`, as a GEC build writes it from its recipe), and the
task's own default otherwise. One task is scored one way: items of a task that name different
conditionings are refused, as is a name that is not a conditioning.
"""

from __future__ import annotations

from ..errors import GramagentsError, InputError
from ..models.conditioning import CONDITIONINGS
from ..records import Item
from ..sources.datasets import Dataset
from ..tasks import TaskSpec


def check_conditioning(name: str) -> str:
    """`name` when it is a conditioning, else the error saying which there are."""
    if name not in CONDITIONINGS:
        raise GramagentsError(f"--conditioning: '{name}' is not one of {', '.join(CONDITIONINGS)}")
    return name


def pair_conditionings(
    dataset: Dataset,
    items: list[Item],
    tasks: dict[str, TaskSpec],
    pair_tasks: list[str],
    override: str | None,
) -> dict[str, str]:
    """Minimal-pair task to the conditioning its items are scored with (in `pair_tasks` order)."""
    if override is not None:
        chosen = check_conditioning(override)
        return {task: chosen for task in pair_tasks}
    if not pair_tasks:
        return {}
    named: dict[str, str] = {}
    for item in items:
        if tasks[item.task].mode != "loglikelihood" or "conditioning" not in item.prompt.vars:
            continue
        value = str(item.prompt.vars["conditioning"])
        line = dataset.lines.get(item.id)
        if value not in CONDITIONINGS:
            raise InputError(
                dataset.path,
                f"item '{item.id}': '{value}' is not one of {', '.join(CONDITIONINGS)}",
                line=line,
                field="conditioning",
            )
        first = named.setdefault(item.task, value)
        if value != first:
            raise InputError(
                dataset.path,
                f"item '{item.id}': {item.task} items name two conditionings ({first} and "
                f"{value}); one task is scored one way",
                line=line,
                field="conditioning",
            )
    return {task: named.get(task, tasks[task].conditioning) for task in pair_tasks}
