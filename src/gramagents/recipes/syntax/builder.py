"""The syntax-QA bank builder: zero-shot and few-shot items from the drawn questions (§3.1).

A zero-shot item asks one test question. A few-shot item asks it after `shots` worked examples
(five, Appendix D.1) of the same knowledge point and type, from the exemplar set and never
about the question's own sentence (nor a copy of it elsewhere in the treebank), drawn once
per seed (three seeds by default): its id ends in `@sN`, its `meta.seed` is N and
`meta.exemplars` names the examples. Where the exemplar set
is too small for a point and type (a small treebank), other test questions of them fill the
prompt (`fill_from_test`). Every item names its test question in `meta.question` (a
few-shot item's seeds share it), so `gramagents eval --limit N` takes N questions, the same
ones zero- and few-shot; items of a task alternate between the points, so the first
questions cover every point.
"""

from __future__ import annotations

import random
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...api import BankBuilderSpec, BuildResources, BuildView, Item, PromptParts, bank_builder
from .filters import SyntaxFile
from .metrics import words
from .points import point_order
from .questions import candidates as question_candidates
from .questions import count_table
from .records import TYPES, SyntaxMatch, SyntaxQuestion
from .tasks import FEW_SHOT, TYPE_TASKS

TEMPLATES = {"TF": "syntax/tf.md", "MC": "syntax/mc.md", "FITB": "syntax/fitb.md"}


class BankOptions(BaseModel):
    """Options of the syntax bank builder."""

    model_config = ConfigDict(extra="forbid")

    shots: int = Field(default=5, ge=1)
    """Worked examples in a few-shot prompt."""
    seeds: int = Field(default=3, ge=1)
    """Few-shot items per question, each with examples drawn with its own seed."""
    fill_from_test: bool = True
    """When the exemplar set holds fewer than `shots` questions of a point and type (a small
    treebank), other test questions of it, from other sentences, fill the prompt."""


class TaskOptions(BaseModel):
    """A syntax task (it has no parameters of its own)."""

    model_config = ConfigDict(extra="forbid")


def _interleaved(questions: list[SyntaxQuestion]) -> list[SyntaxQuestion]:
    """Round robin over the points (in the paper's order), each point's questions in order."""
    by_point: dict[str, list[SyntaxQuestion]] = defaultdict(list)
    for question in questions:
        by_point[question.point].append(question)
    order = sorted(by_point, key=point_order)
    result: list[SyntaxQuestion] = []
    for rank in range(max((len(v) for v in by_point.values()), default=0)):
        result += [by_point[p][rank] for p in order if rank < len(by_point[p])]
    return result


def build(
    view: BuildView, tasks: dict[str, BaseModel], options: BaseModel, resources: BuildResources
) -> list[Item]:
    """Zero-shot items of every test question, then few-shot items, task by task."""
    assert isinstance(options, BankOptions)
    questions = view.of_type(SyntaxQuestion)
    exemplars: dict[tuple[str, str], list[SyntaxQuestion]] = defaultdict(list)
    for question in questions:
        if question.role == "exemplar":
            exemplars[question.type, question.point].append(question)
    dataset: list[Item] = []
    for kind in TYPES:
        test = _interleaved([q for q in questions if q.role == "test" and q.type == kind])
        if TYPE_TASKS[kind] in tasks:
            dataset += [_item(q, TYPE_TASKS[kind], []) for q in test]
        few = TYPE_TASKS[kind] + FEW_SHOT
        if few not in tasks:
            continue
        by_point: dict[str, list[SyntaxQuestion]] = defaultdict(list)
        for question in test:
            by_point[question.point].append(question)
        for question in test:
            pool = [e for e in exemplars[kind, question.point] if e.sentence != question.sentence]
            spare: list[SyntaxQuestion] = []
            if options.fill_from_test and len(pool) < options.shots:
                spare = [o for o in by_point[question.point] if o.sentence != question.sentence]
            for seed in range(1, options.seeds + 1):
                rng = random.Random(f"{resources.seed}/shots/{seed}/{question.id}")
                shots = rng.sample(pool, min(options.shots, len(pool)))
                if spare:
                    shots += rng.sample(spare, min(options.shots - len(shots), len(spare)))
                if shots:
                    dataset.append(_item(question, few, shots, seed))
    return dataset


def _shown(question: SyntaxQuestion) -> dict[str, Any]:
    return {
        "sentence": question.sentence,
        "question": question.question,
        "options": question.options or [],
        "answer": question.answer,
    }


def _item(
    question: SyntaxQuestion,
    task: str,
    shots: list[SyntaxQuestion],
    seed: int = 0,
) -> Item:
    meta: dict[str, Any] = {
        # a borrowed copy asks its lender's question: --limit takes the two together
        "question": question.borrowed_from or question.id,
        "asked": question.question,  # the text: reading an answer skips the phrases it quotes
        "point": question.point,
        "category": question.category,
        "type": question.type,
        "form": question.form,
        "tree": question.tree_id,
        "match": question.match_id,
        "setting": "few-shot" if shots else "zero-shot",
        "flags": question.flags,
        "checks": [c.model_dump(mode="json") for c in question.checks],
    }
    if shots:
        meta.update(seed=seed, shots=len(shots), exemplars=[s.id for s in shots])
    if question.borrowed_from:
        meta["borrowed_from"] = question.borrowed_from
    if question.type == "FITB":
        meta.update(random_span(question.sentence, question.phrase))
    return Item(
        id=question.id if not shots else f"{question.id}@s{seed}",
        task=task,
        prompt=PromptParts(
            template=TEMPLATES[question.type],
            vars={**_shown(question), "shots": [_shown(s) for s in shots]},
        ),
        answer=question.gold(),
        meta=meta,
    )


@lru_cache(maxsize=4096)
def random_span(sentence: str, gold: str) -> dict[str, float]:
    """What a random answerer scores on a fill-in-the-blank question, in expectation.

    The paper's Random row is a model that answers at random (its Table 6: FITB accuracy
    0.42 and F1 22.20 zero-shot); for a blank, a random answer is a stretch of the sentence:
    every contiguous span of its words equally likely. Accuracy and F1 are those of the FITB
    metric (`metrics.fitb_scores`), averaged exactly over all spans.
    """
    tokens, target = words(sentence), words(gold)
    if not tokens or not target:
        return {"random_acc": 0.0, "random_f1": 0.0}
    hits = f1 = 0.0
    for start in range(len(tokens)):
        previous = [0] * (len(target) + 1)  # LCS of tokens[start:end] with each prefix of target
        for end in range(start, len(tokens)):
            current = [0]
            for j, word in enumerate(target, start=1):
                best = previous[j - 1] + 1 if tokens[end] == word else max(previous[j], current[-1])
                current.append(best)
            previous = current
            common, length = current[-1], end - start + 1
            if common:
                f1 += 2 * common / (length + len(target))
            hits += common == length == len(target)
    spans = len(tokens) * (len(tokens) + 1) / 2
    return {"random_acc": hits / spans, "random_f1": f1 / spans}


def artifacts(folder: Path, view: BuildView, items: list[Item]) -> dict[str, Any]:
    """The manifest's `syntax`: question counts and the data files read.

    Every question the trees allow per (type, point) (`candidates`, the paper's Table 4;
    MVP's True/False, those of the points it borrows from),
    questions per (type, point) in the test and exemplar sets (and how many of the test
    questions are borrowed from other points), the same per answer category (`categories`:
    rows of type, point, category, candidates, test, exemplars), flagged questions, and the
    patterns and question-template files with their hashes.
    """
    questions = view.of_type(SyntaxQuestion)
    matches = view.of_type(SyntaxMatch)
    borrowing = {q.point for q in questions if q.borrowed_from}
    possible = [(c.type, matches[c.match]) for c in question_candidates(matches, borrowing)]
    test = [(q.type, q.point) for q in questions if q.role == "test"]
    info = {
        "candidates": _with_borrowed(count_table((k, m.point) for k, m in possible), questions),
        "categories": _category_rows(possible, questions),
        "test": count_table(test),
        "exemplars": count_table((q.type, q.point) for q in questions if q.role == "exemplar"),
        "borrowed": count_table(
            (q.type, q.point) for q in questions if q.role == "test" and q.borrowed_from
        ),
        "files": {f.id: {"path": f.path, "hash": f.hash} for f in view.of_type(SyntaxFile)},
        "flagged": sum(1 for q in questions if q.flags),
    }
    return {"syntax": info}


def _with_borrowed(
    counts: dict[str, dict[str, int]], questions: list[SyntaxQuestion]
) -> dict[str, dict[str, int]]:
    """Counts where a point that borrows its True/False questions (MVP) has its lenders' sum."""
    point_of = {q.id: q.point for q in questions}
    lenders: dict[str, set[str]] = defaultdict(set)
    for question in questions:
        if question.borrowed_from in point_of:
            lenders[question.point].add(point_of[question.borrowed_from])
    table = counts.get("TF", {})
    table.update({p: sum(table.get(q, 0) for q in lent) for p, lent in lenders.items()})
    ordered = sorted(table, key=point_order)
    return {**counts, "TF": {p: table[p] for p in ordered}}


def _category_rows(
    possible: list[tuple[str, SyntaxMatch]], questions: list[SyntaxQuestion]
) -> list[list[Any]]:
    """[type, point, category, candidates, test, exemplars] per group, in the paper's order."""
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for kind, match in possible:
        counts[kind, match.point, match.category][0] += 1
    for question in questions:
        if not question.borrowed_from:
            column = 1 if question.role == "test" else 2
            counts[question.type, question.point, question.category][column] += 1
    order = {kind: i for i, kind in enumerate(TYPES)}
    keys = sorted(counts, key=lambda k: (order[k[0]], point_order(k[1]), -counts[k][0], k[2]))
    return [[*key, *counts[key]] for key in keys]


bank_builder(
    BankBuilderSpec(
        name="syntax",
        build=build,
        task_params={
            name: TaskOptions
            for kind in TYPES
            for name in (TYPE_TASKS[kind], TYPE_TASKS[kind] + FEW_SHOT)
        },  # fmt: skip
        options=BankOptions,
        artifacts=artifacts,
        extra="syntax-qa",
    )
)
