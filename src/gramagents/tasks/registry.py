"""Every task a dataset item can name, with its extraction chain, metric and decoding."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..plugins import Registry
from ..records import Conditioning, GenParams, Item


@dataclass
class Aggregate:
    """A task's scores computed over all of a model's items."""

    scores: dict[str, float]
    """Metric name to value; the task's headline metric first."""
    tables: dict[str, Any] = field(default_factory=dict)
    """Whatever the task's report section shows (per item, per level, ...)."""
    units: dict[str, float] = field(default_factory=dict)
    """Where the headline is a macro average (M2's F0.5 over grammar items): each unit's
    headline score, keyed by the unit's value of the items' `meta.point`. Their mean is the
    headline, so a profile that pools units gives the task's own figure."""


@dataclass(frozen=True)
class TaskSpec:
    """How items of one task are asked and scored."""

    name: str
    family: str
    extractor: str
    """Extraction chain (scoring/extract.py)."""
    metric: str
    """Per-item metric (scoring/metrics.py); its first key is the headline metric."""
    headline: str = "acc"
    params: GenParams = field(default_factory=lambda: GenParams(max_tokens=16))
    random_baseline: Callable[[Item], float] | None = None
    """Expected score of a uniform random guess on an item, for the report's RANDOM row."""
    description: str = ""
    mode: Literal["generate", "loglikelihood", "choice"] = "generate"
    """`loglikelihood`: the item is a minimal pair (`vars.good`, `vars.bad`, optional
    `vars.context`) scored by the model's log-probabilities, not by generated text.
    `choice`: the same pair asked as a forced choice (`choice_form`), its template rendered
    twice, the grammatical sentence first and then second."""
    conditioning: Conditioning = "spaced"
    """How a minimal pair's sentences are scored when neither `--conditioning` nor the items
    (`vars.conditioning`) say: `spaced` or `bare` (models/conditioning.py)."""
    breakdowns: tuple[str, ...] = ("category", "level", "language")
    """Item metadata keys the report breaks scores down by."""
    aggregate: Callable[[list[dict[str, Any]]], Aggregate] | None = None
    """Task-level scoring from all of a model's score records (e.g. M2 macro averages),
    instead of the mean of the items' headline scores."""
    rubric: str | None = None
    """Id (or path) of the rubric a judge scores this task's answers with (`rubrics/`); the
    item's `meta.rubric` overrides it. Judged tasks score `judge_total` and `judge_pct`."""
    choice_of: str | None = None
    """For a forced-choice task: the minimal-pair task whose pairs it asks."""
    prompt: str | None = None
    """For a forced-choice task: the template (`prompts/`) its pairs are asked with."""

    def random_mean(self, items: list[Item]) -> float | None:
        """The mean random baseline over `items` (those with a finite one), if the task has one."""
        baseline = self.random_baseline
        if baseline is None or not items:
            return None
        if isinstance(baseline, Constant):  # the same for every item: no call per item
            values = [baseline.value]
        else:
            values = list(map(baseline, items))
        finite = [v for v in values if v is not None and math.isfinite(v)]
        return sum(finite) / len(finite) if finite else None


TASKS: Registry[TaskSpec] = Registry("task")


def task(spec: TaskSpec) -> TaskSpec:
    """Register a task."""
    return TASKS.register(spec.name, spec)


CHOICE_SUFFIX = "-CHOICE"
"""A forced-choice task is named after its minimal-pair task: `CLIMP` and `CLIMP-CHOICE`."""


def choice_form(spec: TaskSpec, prompt: str, max_tokens: int = 48) -> TaskSpec:
    """The forced-choice form of a minimal-pair task: the same pairs, asked with `prompt`.

    Each pair is shown as two numbered sentences and the model asked which is acceptable,
    once with the grammatical sentence first and once second (scoring/pair_choice.py). Its
    scores go under their own name (`CLIMP-CHOICE`), never beside the log-probability scores.
    `max_tokens` leaves room for a reply that gives the chosen sentence back.
    """
    if spec.mode != "loglikelihood":
        raise ValueError(f"{spec.name} is not a minimal-pair task")
    return TaskSpec(
        name=spec.name + CHOICE_SUFFIX,
        family=spec.family,
        extractor="pair-choice",
        metric="pair-choice",
        params=GenParams(max_tokens=max_tokens),
        random_baseline=constant(0.5),
        description=f"{spec.name} asked as a forced choice, in both orders.",
        mode="choice",
        breakdowns=spec.breakdowns,
        choice_of=spec.name,
        prompt=prompt,
    )


def rubric_of(item: Item, tasks: dict[str, TaskSpec]) -> str | None:
    """The rubric an item's answer is judged with (its own `meta.rubric`, else its task's)."""
    return item.meta.get("rubric") or tasks[item.task].rubric


def get_task(name: str) -> TaskSpec | None:
    """The task called `name`, if any."""
    return TASKS.get(name)


def known_tasks() -> list[str]:
    """Names of registered tasks."""
    return TASKS.names()


@dataclass(frozen=True)
class Constant:
    """A baseline that is the same for every item (its mean needs no call per item)."""

    value: float

    def __call__(self, _item: Any) -> float:
        """The baseline of any item."""
        return self.value


def constant(value: float) -> Constant:
    """A baseline that is the same for every item."""
    return Constant(value)


# --- bank builders ----------------------------------------------------------------------------


Embed = Callable[[list[str], str], Any]
"""`embed(texts, model) -> array of unit vectors`, one row per text."""


@dataclass(frozen=True)
class BuildResources:
    """What a bank builder may use besides the points and instances."""

    seed: int
    embed: Embed
    counts: dict[str, int] = field(default_factory=dict)
    """What the builder counts as it goes (e.g. distractors replaced); the build adds them to
    the builder's stage in the manifest."""


@dataclass(frozen=True)
class BankBuilderSpec:
    """A deterministic bank builder and the parameters a recipe may give it."""

    name: str
    build: Callable[..., list[Item]]
    """`build(view, tasks, options, resources) -> items` (view: `workflow.nodes.BuildView`)."""
    task_params: dict[str, type[BaseModel]]
    """Task name to the pydantic model of that task's recipe parameters."""
    options: type[BaseModel]
    """Pydantic model of the builder's own options."""
    artifacts: Callable[..., dict[str, Any]] | None = None
    """`artifacts(folder, view, items) -> info`: extra files a build writes (e.g. M2 files);
    the info goes into the manifest."""
    extra: str | None = None
    """The extra (`gramagents.extras`) a build with this builder needs, checked before it
    starts."""


BUILDERS: Registry[BankBuilderSpec] = Registry("bank builder")


def bank_builder(spec: BankBuilderSpec) -> BankBuilderSpec:
    """Register a bank builder under the name recipes use."""
    return BUILDERS.register(spec.name, spec)


def bank_builder_in(name: str, module: str) -> None:
    """Announce that importing `module` registers the bank builder `name`.

    A family's task specs are imported by every eval; its builder (parameter models, bank code)
    only by a build, when `get_builder` first asks for it.
    """
    BUILDERS.announce(name, module)


def get_builder(name: str) -> BankBuilderSpec | None:
    """The bank builder called `name`, if any."""
    return BUILDERS.get(name)


def known_builders() -> list[str]:
    """Names of registered bank builders (imported or not)."""
    return BUILDERS.names()
