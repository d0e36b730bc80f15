"""The answers `gramagents judge-check` probes: a seeded sample of a run's judged answers.

Each comes with what its judges read: the answer as the model gave it (`responses.jsonl`),
the task input as the eval gave the judge (the item of the run's dataset, its prompt rendered
again) and the rubric it was judged with.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import GramagentsError, RunError
from ..records import EvalManifest, Item
from ..runtime.reconcile import RESPONSES, SCORES
from ..runtime.rundir import iter_jsonl
from .jury import judged_records, recorded_verdicts
from .probes import language_of

if TYPE_CHECKING:
    from ..runtime.run import Run
    from ..templates import PromptTemplate
    from .rubric import Rubric


@dataclass(frozen=True)
class Probed:
    """One sampled answer and what its judges read with it."""

    model: str
    item_id: str
    answer: str
    task_input: str
    rubric: Rubric
    language: str
    """The task's language, for the probes' text (`zh` or `en`)."""


def sample_answers(run: Run, manifest: EvalManifest, limit: int, seed: int) -> list[Probed]:
    """At most `limit` judged answers of the run, drawn with `seed`, in (model, item) order.

    Raises:
        RunError: The run has no judged answer, or its dataset cannot be read.
    """
    scored = sorted(
        (str(r["model"]), str(r["item_id"]))
        for r in judged_records(iter_jsonl(run.file(SCORES), skip_unreadable=True))
        if any(v.total is not None for v in recorded_verdicts(r["details"]["judge"]))
    )
    if not scored:
        raise RunError(f"{run.path}: no judged answers with a verdict to probe")
    chosen = scored if len(scored) <= limit else sorted(random.Random(seed).sample(scored, limit))
    wanted = set(chosen)
    answers = {
        (str(r.get("model")), str(r.get("item_id"))): str(r.get("raw") or "")
        for r in iter_jsonl(run.file(RESPONSES), skip_unreadable=True)
        if (str(r.get("model")), str(r.get("item_id"))) in wanted
    }
    items = _items(run, manifest, {item for _, item in chosen})
    context = _Context()
    return [
        context.probed(model, items[item_id], answers[model, item_id])
        for model, item_id in chosen
        if (model, item_id) in answers and item_id in items
    ]


def _items(run: Run, manifest: EvalManifest, ids: set[str]) -> dict[str, Item]:
    """The run's items of `ids`, read from the dataset the eval read."""
    from ..sources.datasets import open_dataset

    dataset = manifest.dataset or {}
    path = Path(str(dataset.get("path", "")))
    if not dataset.get("path") or not path.exists():
        raise RunError(
            f"{run.path}: its dataset {path} is not found; run judge-check from the folder "
            "the eval ran in"
        )
    found = {}
    for _, item in open_dataset(path, str(dataset.get("format") or "gramagents")).rows():
        if item.id in ids:
            found[item.id] = item
    return found


class _Context:
    """Templates, task specs and rubrics, each loaded once."""

    def __init__(self) -> None:
        self.rubrics: dict[str, Rubric] = {}
        self.templates: dict[str, PromptTemplate] = {}

    def probed(self, model: str, item: Item, answer: str) -> Probed:
        from ..tasks.registry import get_task, rubric_of
        from ..templates import load_prompt
        from ..workflow.eval_judge import task_input_of
        from .rubric import find_rubric

        spec = get_task(item.task)
        name = rubric_of(item, {item.task: spec}) if spec is not None else None
        if name is None:
            raise GramagentsError(f"item {item.id}: its task {item.task} is not judged here")
        if name not in self.rubrics:
            self.rubrics[name] = find_rubric(name)
        template = self.templates.get(item.prompt.template)
        if template is None:
            template = self.templates[item.prompt.template] = load_prompt(item.prompt.template)
        messages = template.render(item.prompt.vars)
        task_input = task_input_of(item, messages)
        return Probed(
            model=model,
            item_id=item.id,
            answer=answer,
            task_input=task_input,
            rubric=self.rubrics[name],
            language=language_of(item.meta, task_input),
        )
