"""EduEval's bank builder (§4): zero-shot and few-shot items per task, in the order read."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...api import (
    BankBuilderSpec,
    BuildResources,
    BuildView,
    Item,
    PromptParts,
    bank_builder,
    find_resource,
)
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
WRITTEN_SHOTS = ("question_generation", "teaching_design")
"""Tasks whose release has no reference outputs: their worked examples come from
`prompts/edu/examples/<shape>.jsonl` (written for the project, overridable like any prompt)."""


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
    for shape in WRITTEN_SHOTS:
        by_source["written", shape] = written_shots(shape)
    rng = random.Random(resources.seed)
    dataset: list[Item] = []
    for shots in options.shots:
        for item in items:
            task, template = TASK_OF_SHAPE[item.shape]
            if task not in tasks:
                continue
            examples: list[dict[str, Any]] = []
            if shots:
                source = "written" if item.shape in WRITTEN_SHOTS else item.level
                pool = [o for o in by_source[source, item.shape] if o.id != item.id and o.answer]
                if len(pool) < shots:
                    continue  # too few worked examples to show: zero-shot only
                examples = [_shot(o) for o in rng.sample(pool, shots)]
            dataset.append(_item(item, task, template, shots, examples, view.flags))
    return dataset


def written_shots(shape: str) -> list[EduItem]:
    """The worked examples of a task without reference outputs, as items (none if no file).

    A JSONL file, one example a line, with the release's fields of the task and `answer`
    (the example output), as the EduEval code's few-shot files have them.
    """
    from ...api import GramagentsError, InputError, jsonl_rows, read_utf8
    from .fields import other_fields

    try:
        path = find_resource("prompts", f"edu/examples/{shape}.jsonl")
    except GramagentsError:
        return []
    examples = []
    for line, record in jsonl_rows(path, read_utf8(path)):
        grade, subject = record.get("grade"), record.get("subject")
        fields = other_fields(record, shape, [], None if grade is None else str(grade), subject)
        answer = record.get("answer")
        if isinstance(fields, str) or not isinstance(answer, str) or not answer.strip():
            raise InputError(
                path,
                "a worked example needs its task's fields and an answer",
                line=line,
                field="answer",
            )
        examples.append(
            EduItem(
                id=f"{path.name}#{line}",
                task=f"examples/{shape}",
                level="creativity",
                subject=subject,
                grade=None if grade is None else str(grade),
                prompt=fields["prompt"],
                options=None,
                answer=answer.strip(),
                explanation=None,
                difficulty=None,
                metric="judge",
                shape=shape,
                source=f"{path}:{line}",
            )
        )
    return examples


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
            "point": point_of(item),
            "level": item.level,
            "subject": item.subject,
            "grade": item.grade,
            "source_task": item.task,
            "task_id": task_id(item.task),
            "shape": item.shape,
            "shots": shots,
            "difficulty": item.difficulty,
            "options": item.options,
            "route": item.route,
            "flags": flags.get(item.id, []),
            "source": item.source,
        },
    )


def point_of(item: EduItem) -> str:
    """What an EduEval item measures, as a profile joins items: its subject and paper task.

    EduEval has no grammar points; items of one subject in one task (`数学/5-1`, question
    generation in mathematics) are what its weakest points are made of. Without a subject,
    the task alone.
    """
    task = task_id(item.task)
    return f"{item.subject}/{task}" if item.subject else task


def task_id(source_task: str) -> str:
    """The paper's id of a source task (`Memory/Primary_Formula_Recall`: `1-1`), else its name."""
    from .taxonomy import paper_task

    stem = source_task.rsplit("/", 1)[-1]
    found = paper_task(stem)
    return str(found["id"]) if found else stem


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
        return {"prompt": item.raw.get("question", ""), "essay": item.prompt, "answer": item.answer}
    return {"prompt": item.prompt, "answer": item.answer}


def artifacts(folder: Path, view: BuildView, items: list[Item]) -> dict[str, Any]:
    """The manifest's list of near-duplicates removed: each with the item kept and similarity.

    Read back from the build's `failures.jsonl`, where the dedup filter recorded them.
    """
    path = folder / "failures.jsonl"
    if not path.is_file():
        return {}
    pairs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "duplicates" in entry and "jaccard" in entry:
            pairs.append(
                {
                    "removed": entry["id"],
                    "kept": entry["duplicates"],
                    "similarity": entry["jaccard"],
                    "threshold": entry.get("threshold"),
                }
            )
    return {"dedup": pairs} if pairs else {}


bank_builder(
    BankBuilderSpec(
        name="edu",
        build=build,
        task_params={task: TaskOptions for task, _ in TASK_OF_SHAPE.values()},
        options=BankOptions,
        artifacts=artifacts,
    )
)
