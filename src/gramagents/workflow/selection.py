"""The items an eval covers, and what the run needs to know of them, gathered in one pass.

`--limit N` takes N *questions* per task, sampled, not the first N lines. A question is what
an item's `meta.question` names (a syntax-QA question asked zero-shot and under three few-shot
seeds, a grammar-book unit asked at several numbers of options), else the item itself; the
items of a question are taken together and count once. Each question gets a rank from the run's
seed and its name alone, so tasks that share questions (SYNTAX-TF and SYNTAX-TF-FEWSHOT) take
the same ones. Within a task the questions are spread over its categories (its first report
breakdown, e.g. CPG's category or syntax-QA's knowledge point) and, within a category, over
the source files the items came from: the lowest-ranked question of every category comes
first, then the second of every category, and so on, each category taking its files in
turn the same way.

Only the N lowest-ranked questions of each (task, category, file) are ever kept while the
dataset streams by, so memory does not grow with the file.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..errors import GramagentsError, InputError
from ..records import Item
from ..resources import Kind, ResourceRefused, relative_name
from ..runtime.memory import collector_paused
from ..sources.answers import AnswerFile
from ..sources.datasets import Dataset
from ..tasks import TaskSpec, get_task
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate, load_prompt

METHOD = (
    "questions (meta.question, else the item) ranked by a hash of the seed and the question, "
    "spread over each task's categories and, within them, its source files"
)
SOURCE_KEYS = ("source_file", "file", "source", "tree")
"""Item metadata that names the file an item came from (`file:line` and `file#n` read as
`file`); provenance's first source row is used where none is given."""


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
    """Tasks that compare log-likelihoods, sorted (after pair_methods.py: those still asked
    so)."""
    rubrics: list[str]
    """Rubrics the judged items' answers are scored with, sorted."""
    no_gold: dict[str, int]
    """Per task: items without a gold answer and without a rubric."""
    random_baselines: dict[str, float]
    conditioning: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task, how its sentences are scored (pair_conditioning.py)."""
    pairs: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task, how its pairs are asked: `loglik` or `choice` (pair_methods.py)."""
    sampling: dict[str, Any] | None = None
    """How `--limit` sampled (limit, seed, method), for the manifest; None without a limit."""


def question_of(item: Item) -> str:
    """The question an item asks: its `meta.question`, else its own id."""
    named = item.meta.get("question")
    return item.id if named is None or named == "" else str(named)


def rank_of(seed: int, question: str) -> int:
    """A question's place in the sample: the same for every task, fixed by the seed."""
    data = f"{seed}\x00{question}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def stratum_of(item: Item, spec: TaskSpec) -> tuple[str, str]:
    """(category, source file) of an item: the groups `--limit` spreads a task's sample over."""
    meta = item.meta
    category = ""
    for key in (*spec.breakdowns, "category"):
        value = meta.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            category = f"{key}={value}"
            break
    return category, _source_file(meta)


def _source_file(meta: dict[str, Any]) -> str:
    for key in SOURCE_KEYS:
        value = meta.get(key)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = value[0].get("path")
        if isinstance(value, str) and value:
            name = value.partition("#")[0]  # `file#tree`
            head, colon, tail = name.rpartition(":")  # `file:line`
            return head if colon and tail.isdigit() else name
    provenance = meta.get("provenance")
    if isinstance(provenance, dict):
        rows = provenance.get("source")
        if isinstance(rows, list) and rows and isinstance(rows[0], dict):
            return str(rows[0].get("path", ""))
    return ""


Kept = tuple[int, int | None, Item]
"""An item kept for the selection: its position in the dataset, its line and itself."""


class _Stratum:
    """The `limit` lowest-ranked questions seen so far of one (task, category, file)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.questions: dict[str, list[Kept]] = {}
        self.ranks: dict[str, int] = {}
        self._heap: list[tuple[int, str]] = []  # (-rank, question): the highest on top

    def offer(self, rank: int, question: str, entry: Kept) -> None:
        """Keep the entry if its question is among the lowest-ranked (evicting the highest)."""
        kept = self.questions.get(question)
        if kept is not None:
            kept.append(entry)
            return
        if len(self._heap) >= self.limit:
            if (-rank, question) <= self._heap[0]:
                return  # ranked above every question kept: never needed
            _, evicted = heapq.heappop(self._heap)
            del self.questions[evicted], self.ranks[evicted]
        heapq.heappush(self._heap, (-rank, question))
        self.questions[question] = [entry]
        self.ranks[question] = rank


class Sampler:
    """Per task, the questions `--limit` may take, kept with bounded memory as items stream by."""

    def __init__(self, limit: int, seed: int) -> None:
        self.limit = limit
        self.seed = seed
        self._strata: dict[str, dict[tuple[str, str], _Stratum]] = defaultdict(dict)

    def offer(self, entry: Kept, spec: TaskSpec) -> None:
        """Consider one item."""
        item = entry[2]
        question = question_of(item)
        key = stratum_of(item, spec)
        strata = self._strata[item.task]
        stratum = strata.get(key) or strata.setdefault(key, _Stratum(self.limit))
        stratum.offer(rank_of(self.seed, question), question, entry)

    def chosen(self) -> list[Kept]:
        """The items of each task's `limit` questions."""
        found: list[Kept] = []
        for strata in self._strata.values():
            found += _take(strata, self.limit)
        return found


def _take(strata: dict[tuple[str, str], _Stratum], limit: int) -> list[Kept]:
    """`limit` questions of one task, round-robin over categories, then over their files."""
    by_category: dict[str, list[tuple[int, int, str, _Stratum]]] = defaultdict(list)
    for (category, _), stratum in strata.items():
        ranked = sorted((r, q) for q, r in stratum.ranks.items())
        for depth, (rank, question) in enumerate(ranked):
            by_category[category].append((depth, rank, question, stratum))
    order: list[tuple[int, int, str, _Stratum]] = []
    for entries in by_category.values():
        entries.sort(key=lambda e: e[:3])
        order += [(turn, rank, q, s) for turn, (_, rank, q, s) in enumerate(entries)]
    order.sort(key=lambda e: e[:3])
    taken: dict[str, list[Kept]] = {}
    for _, _, question, stratum in order:
        if question not in taken and len(taken) >= limit:
            continue
        taken.setdefault(question, []).extend(stratum.questions[question])
    return [entry for entries in taken.values() for entry in entries]


@lru_cache(maxsize=1024)
def _refusal(kind: Kind, name: str) -> str | None:
    """Why a resource an item names is refused (outside the resource folders), if it is."""
    try:
        relative_name(kind, name)
    except ResourceRefused as exc:
        return exc.why
    return None


def _check_names(dataset: Dataset, line: int | None, item: Item) -> None:
    """Refuse an item whose template or rubric names a file outside the resource folders."""
    named = [("prompts", "prompt.template", item.prompt.template)]
    rubric = item.meta.get("rubric")
    if isinstance(rubric, str) and rubric:
        named.append(("rubrics", "meta.rubric", rubric))
    for kind, field_name, name in named:
        refused = _refusal(kind, name)  # type: ignore[arg-type]
        if refused is not None:
            raise InputError(
                dataset.path,
                f"{kind[:-1]} '{name}' (item '{item.id}') {refused}",
                line=line,
                field=field_name,
            )


def _stream(
    dataset: Dataset, limit: int | None, seed: int, answers: AnswerFile | None
) -> tuple[list[Kept], dict[str, TaskSpec]]:
    """Read every row once: check it, and keep it (or offer it to the sample)."""
    tasks: dict[str, TaskSpec] = {}
    sampler = Sampler(limit, seed) if limit is not None else None
    kept: list[Kept] = []
    with collector_paused():
        for position, (line, item) in enumerate(dataset.rows()):
            if answers is not None:
                item = answers.apply(item)
            spec = tasks.get(item.task) or _spec(dataset, line, item)
            tasks[item.task] = spec
            _check_names(dataset, line, item)
            if sampler is None:
                kept.append((position, line, item))
            else:
                sampler.offer((position, line, item), spec)
    if answers is not None:
        answers.finish(dataset)
    chosen = kept if sampler is None else sorted(sampler.chosen(), key=lambda e: e[0])
    repeated = dataset.repeated_lines()
    if repeated:
        chosen = [entry for entry in chosen if entry[1] not in repeated]
    return chosen, tasks


def _spec(dataset: Dataset, line: int | None, item: Item) -> TaskSpec:
    spec = get_task(item.task)
    if spec is None:
        raise InputError(
            dataset.path,
            f"unknown task '{item.task}' (item '{item.id}')",
            line=line,
            field="task",
        )
    return spec


def select_items(
    dataset: Dataset, limit: int | None, seed: int = 0, answers: AnswerFile | None = None
) -> Selection:
    """Items in scope (at most `limit` questions per task), their tasks' specs and tallies.

    One pass over the dataset checks every item and keeps those in scope (all of them, or the
    sample, in dataset order), filling in gold answers from `answers`; the tallies and the
    baselines are then taken over what was kept. A streamed dataset's `lines` are set to the
    kept items' lines.
    """
    chosen, tasks = _stream(dataset, limit, seed, answers)
    lines = {item.id: line for _, line, item in chosen if line is not None}
    if dataset.stream is not None:
        dataset.lines = lines
    items = [item for _, _, item in chosen]
    groups: dict[str, list[Item]] = {}
    rubrics: set[str] = set()
    no_gold: dict[str, int] = {}
    for item in items:
        groups.setdefault(item.task, []).append(item)
        rubric = rubric_of(item, tasks)
        if rubric:
            rubrics.add(rubric)
        elif item.answer is None:
            no_gold[item.task] = no_gold.get(item.task, 0) + 1
    per_task = {name: len(group) for name, group in groups.items()}
    return Selection(
        items=items,
        tasks=tasks,
        per_task=per_task,
        templates=_templates(dataset, items, lines),
        pair_tasks=sorted(t for t in per_task if tasks[t].mode == "loglikelihood"),
        rubrics=sorted(rubrics),
        no_gold=no_gold,
        random_baselines={
            name: mean
            for name, group in groups.items()
            if (mean := tasks[name].random_mean(group)) is not None
        },
        sampling=None
        if limit is None
        else {"limit": limit, "seed": seed, "unit": "question", "method": METHOD},
    )


def _templates(
    dataset: Dataset, items: list[Item], lines: dict[str, int]
) -> dict[str, PromptTemplate]:
    """The templates the items use, loaded; one that cannot be names an item that uses it."""
    first: dict[str, Item] = {}
    for item in items:
        first.setdefault(item.prompt.template, item)
    loaded: dict[str, PromptTemplate] = {}
    for name in sorted(first):
        try:
            loaded[name] = load_prompt(name)
        except InputError:
            raise  # the template file itself is broken: its own line says where
        except GramagentsError as exc:
            item = first[name]
            raise InputError(
                dataset.path,
                f"item '{item.id}': {exc}",
                line=lines.get(item.id, dataset.lines.get(item.id)),
                field="prompt.template",
            ) from None
    return loaded
