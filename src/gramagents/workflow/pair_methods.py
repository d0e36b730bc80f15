"""How each minimal-pair task of an eval is asked: by log-probabilities, or as a forced choice.

`--pairs loglik` (the default) compares the log-probabilities of a pair's two sentences (the
task itself, `CLIMP`); `--pairs choice` shows both sentences and asks which is acceptable, in
both orders, under the task's forced-choice form (`CLIMP-CHOICE`, tasks/registry.py
`choice_form`), for any model that answers a prompt. The two never share a task name, so their
scores never mix. A profile may give each task its own method, and `none` leaves a task's
pairs out of the run (no method the model supports measures them).

The choice is made after `--limit` has sampled the pairs, so both methods ask the same pairs;
a pair keeps its id under either method (the manifest's `pairs` and the resume's input
`pairs/TASK` keep the two apart in one run folder).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..errors import GramagentsError
from ..records import ChatRequest, GenParams, Item, PromptParts
from ..scoring.pair_choice import ORDERS, order_vars
from ..tasks import TaskSpec, get_task
from ..tasks.registry import CHOICE_SUFFIX
from ..templates import PromptTemplate, load_prompt
from .selection import Selection

LOGLIK = "loglik"
CHOICE = "choice"
NONE = "none"
PAIR_METHODS = (LOGLIK, CHOICE)
"""What `--pairs` accepts."""
DESCRIBED = {LOGLIK: "log-probability", CHOICE: "forced choice"}


def check_pairs(name: str) -> str:
    """`name` when it is a method `--pairs` knows, else the error saying which there are."""
    if name not in PAIR_METHODS:
        raise GramagentsError(f"--pairs: '{name}' is not one of {', '.join(PAIR_METHODS)}")
    return name


def method_of(spec: TaskSpec | None) -> str | None:
    """How a task's pairs are asked (`loglik`, `choice`), None for a task of other items."""
    if spec is None:
        return None
    return {"loglikelihood": LOGLIK, "choice": CHOICE}.get(spec.mode)


def pair_task_of(spec: TaskSpec) -> str:
    """The minimal-pair task a task asks (itself, or the one it is the forced choice of)."""
    return spec.choice_of or spec.name


def choice_task(task: str) -> TaskSpec:
    """The forced-choice form of a minimal-pair task (`CLIMP-CHOICE`)."""
    spec = get_task(task + CHOICE_SUFFIX)
    if spec is None or spec.choice_of != task:
        raise GramagentsError(
            f"--pairs choice: {task} has no forced-choice form ({task}{CHOICE_SUFFIX} is not "
            "registered); ask it with --pairs loglik"
        )
    return spec


def apply_pair_methods(
    selection: Selection, default: str, methods: Mapping[str, str] | None = None
) -> Selection:
    """The selection with each minimal-pair task asked as `methods` (else `default`) says.

    `loglik` keeps a task's items; `choice` moves them to its forced-choice task; `none`
    leaves them out. The selection's tallies, templates and baselines follow.
    """
    chosen = {t: (methods or {}).get(t, default) for t in selection.pair_tasks}
    if all(m == LOGLIK for m in chosen.values()):
        return replace(selection, pairs=dict(chosen))
    tasks = dict(selection.tasks)
    moved: dict[str, TaskSpec] = {}
    for task, method in chosen.items():
        if method == CHOICE:
            moved[task] = tasks.setdefault(choice_task(task).name, choice_task(task))
    items: list[Item] = []
    for item in selection.items:
        method = chosen.get(item.task)
        if method == NONE:
            continue
        if method == CHOICE:
            spec = moved[item.task]
            assert spec.prompt is not None
            prompt = PromptParts(template=spec.prompt, vars=item.prompt.vars)
            item = item.model_copy(update={"task": spec.name, "prompt": prompt})
        items.append(item)
    return _retallied(selection, items, tasks, chosen)


def _retallied(
    selection: Selection, items: list[Item], tasks: dict[str, TaskSpec], chosen: dict[str, str]
) -> Selection:
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.task, []).append(item)
    known = selection.templates
    used = sorted({i.prompt.template for i in items})
    templates = {name: known[name] if name in known else load_prompt(name) for name in used}
    return replace(
        selection,
        items=items,
        tasks=tasks,
        per_task={name: len(group) for name, group in groups.items()},
        templates=templates,
        pair_tasks=[t for t in selection.pair_tasks if chosen[t] == LOGLIK],
        random_baselines={
            name: mean
            for name, group in groups.items()
            if (mean := tasks[name].random_mean(group)) is not None
        },
        no_gold={t: n for t, n in selection.no_gold.items() if t in groups},
        pairs={t: m for t, m in chosen.items() if m != NONE},
    )


def choice_requests(
    item: Item, template: PromptTemplate, params: GenParams
) -> tuple[ChatRequest, ChatRequest]:
    """A pair's two forced-choice requests: the grammatical sentence first, then second."""
    first, second = (order_vars(item.prompt.vars, order) for order in ORDERS)
    return _request(template, first, params), _request(template, second, params)


def _request(
    template: PromptTemplate, variables: dict[str, object], params: GenParams
) -> ChatRequest:
    return ChatRequest(
        messages=template.render(variables),
        params=params,
        prompt_hash=template.hash,
        base_prompt=template.render_base(variables),
    )
