"""The CPG-EVAL banks (Wang 2025, `../shared/seeds/000_*`, §3.3), built from a grammar-point table.

Every bank is deterministic in (table, instances, parameters, seed): random choices use a
generator seeded by the seed and the item's own id, so adding a point does not reshuffle the
others. Prompts are the released bank's Chinese wording (`prompts/cpg/*.zh.md`) for Chinese
points and an English counterpart (`*.en.md`) for the rest.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ...api import BuildResources, GrammarPoint, Instance, Item, PromptParts, dense
from .params import (
    BankParams,
    BatchFParams,
    BatchTParams,
    CatGraParams,
    ConInsF10Params,
    ConInsT5F5Params,
    NegativeSource,
    SimGraParams,
    SingleFParams,
)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_FORM_SPLIT = re.compile(r"[、，,/／;；]|和|或")
_CJK_FORM = re.compile(r"^[\u4e00-\u9fff]{1,4}$")


_ENGLISH_LAYOUT = {"con-ins-f10": "batch", "con-ins-t5f5": "batch"}
"""The released files lay CON-INS out apart from BATCH; English points share one layout."""


def template(name: str, language: str) -> str:
    """Prompt template for a bank in a language (Chinese prompts for `zh`, else English)."""
    if language == "zh":
        return f"cpg/{name}.zh.md"
    return f"cpg/{_ENGLISH_LAYOUT.get(name, name)}.en.md"


def group_of(point: GrammarPoint) -> str | None:
    """The group a point is told apart within: its table's `group`, else its category."""
    if point.group is None:
        return f"category:{point.category}"
    return f"group:{point.group}" if point.group else None


def point_meta(point: GrammarPoint) -> dict[str, Any]:
    """Item metadata that reports break scores down by."""
    return {
        "point": point.id,
        "category": point.category,
        "level": point.level,
        "language": point.language,
    }


def point_forms(point: GrammarPoint) -> set[str]:
    """Surface forms named by a Chinese point (会; 上、下、里…); none for descriptive names."""
    if point.language != "zh":
        return set()
    return {
        piece.strip() for piece in _FORM_SPLIT.split(point.name) if _CJK_FORM.match(piece.strip())
    }


def bank_sentences(
    points: list[GrammarPoint], instances: Iterable[Instance], mode: str
) -> dict[str, list[Instance]]:
    """The example sentences each point contributes to the banks, in source order."""
    by_source: dict[str, Instance] = {}
    rewrites: dict[str, Instance] = {}
    for instance in instances:
        if instance.kind != "example":
            continue
        if instance.origin == "source":
            by_source[instance.id] = instance
        elif instance.status == "accepted" and instance.replaces:
            rewrites[instance.replaces] = instance
    chosen: dict[str, list[Instance]] = {p.id: [] for p in points}
    for source_id, source in by_source.items():
        rewrite = rewrites.get(source_id)
        pick: Instance | None
        if mode == "source":
            pick = source if source.status == "accepted" else None
        elif rewrite is not None:
            pick = rewrite
        else:
            pick = source if mode == "prefer-rewritten" and source.status == "accepted" else None
        if pick is not None and pick.point_id in chosen:
            chosen[pick.point_id].append(pick)
    return chosen


def confusing_sentences(
    points: list[GrammarPoint], instances: Iterable[Instance]
) -> dict[str, list[Instance]]:
    """Accepted confusing instances per point: the table's own, then generated ones."""
    found: dict[str, list[Instance]] = {p.id: [] for p in points}
    for instance in instances:
        if instance.kind == "confuser" and instance.status == "accepted":
            found.setdefault(instance.point_id, []).append(instance)
    return found


@dataclass
class BankInputs:
    """Points, their sentences and the helpers every bank uses."""

    points: list[GrammarPoint]
    sentences: dict[str, list[Instance]]
    confusers: dict[str, list[Instance]]
    options: BankParams
    resources: BuildResources
    by_id: dict[str, GrammarPoint] = field(init=False)
    _similar: dict[str, list[str]] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.by_id = {p.id: p for p in self.points}
        self.groups: dict[tuple[str, str], list[GrammarPoint]] = defaultdict(list)
        for point in self.points:
            key = group_of(point)
            if key is not None:
                self.groups[point.language, key].append(point)

    def group(self, point: GrammarPoint) -> list[GrammarPoint]:
        """The points of `point`'s group, itself included, in table order (none: no group)."""
        key = group_of(point)
        return self.groups[point.language, key] if key is not None else []

    def group_pairs(self) -> Iterator[tuple[GrammarPoint, GrammarPoint]]:
        """Every (asked point, other point of its group), as the released banks pair them.

        Asked points in table order, each with the others of its group in table order.
        """
        for asked in self.points:
            for other in self.group(asked):
                if other.id != asked.id:
                    yield asked, other

    def rng(self, *parts: object) -> random.Random:
        """A generator seeded by the build seed and `parts` (an item's identity)."""
        return random.Random("/".join(map(str, (self.resources.seed, *parts))))

    def similar(self, point: GrammarPoint) -> list[GrammarPoint]:
        """Other points of the same language, most similar first (point-text embeddings)."""
        if self._similar is None:
            self._similar = self._rank_by_similarity()
        return [self.by_id[i] for i in self._similar[point.id]]

    def _rank_by_similarity(self) -> dict[str, list[str]]:
        import numpy as np

        ranking: dict[str, list[str]] = {}
        by_language: dict[str, list[GrammarPoint]] = defaultdict(list)
        for point in self.points:
            by_language[point.language].append(point)
        for group in by_language.values():
            texts = [f"{p.label()}。{p.description}" if p.description else p.label() for p in group]
            vectors = self.resources.embed(texts, self.options.embedding_model)
            similarity = dense(vectors @ vectors.T)
            for row, point in enumerate(group):
                order = np.argsort(-similarity[row], kind="stable")
                ranking[point.id] = [group[i].id for i in order if i != row]
        return ranking

    def negatives(self, point: GrammarPoint, source: NegativeSource) -> list[GrammarPoint]:
        """Points `point`'s sentences may be asked against, in the order they are used."""
        same_language = [
            p for p in self.points if p.id != point.id and p.language == point.language
        ]
        if source == "similar":
            return self.similar(point)
        if source == "same-category":
            pool = [p for p in same_language if p.category == point.category]
            return pool or self.similar(point)
        pool = [
            p for p in same_language if source == "any" or p.category != point.category
        ] or same_language
        self.rng("negatives", point.id, source).shuffle(pool)
        return pool

    def literal_match(self, asked: GrammarPoint, sentence: str) -> bool:
        """The sentence shows a form of the asked point (so it may well contain it)."""
        return self.options.skip_literal_matches and any(
            form in sentence for form in point_forms(asked)
        )


@dataclass(frozen=True)
class _Question:
    """What a one-sentence item asks: its prompt layout and variables, gold and extra meta."""

    layout: str
    """Prompt template name (`single`, `sim`, `cat`), before the language suffix."""
    variables: dict[str, Any]
    """Template variables besides the sentence."""
    answer: Any
    meta: dict[str, Any] = field(default_factory=dict)
    """Meta besides the point's, the sentence id and the provenance."""
    suffix: str = ""
    """Added to the item id after the sentence id (one sentence asked several ways)."""


def _sentence_item(task: str, point: GrammarPoint, instance: Instance, question: _Question) -> Item:
    return Item(
        id=f"{task}/{instance.id}{question.suffix}",
        task=task,
        prompt=PromptParts(
            template=template(question.layout, point.language),
            vars={"sentence": instance.text, **question.variables},
        ),
        answer=question.answer,
        meta={
            **point_meta(point),
            "sentence_id": instance.id,
            **question.meta,
            "provenance": instance.provenance.model_dump(mode="json"),
        },
    )


_BATCH_LAYOUT = {"CON-INS-F10": "con-ins-f10", "CON-INS-T5F5": "con-ins-t5f5"}


def _batch_item(
    task: str,
    item_id: str,
    point: GrammarPoint,
    picked: list[Instance],
    gold: str,
) -> Item:
    return Item(
        id=item_id,
        task=task,
        prompt=PromptParts(
            template=template(_BATCH_LAYOUT.get(task, "batch"), point.language),
            vars={"point": point.label(), "n": len(picked), "sentences": [i.text for i in picked]},
        ),
        answer=gold,
        meta={
            **point_meta(point),
            "n": len(picked),
            "sentence_ids": [i.id for i in picked],
            "provenance": [i.provenance.model_dump(mode="json") for i in picked],
        },
    )


def single_t(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """Each sentence with its own point: gold T."""
    for point in bank.points:
        for instance in bank.sentences[point.id]:
            question = _Question("single", {"point": point.label()}, "T")
            yield _sentence_item("SINGLE-T", point, instance, question)


def _single_f_item(point: GrammarPoint, instance: Instance, asked: GrammarPoint) -> Item:
    question = _Question(
        "single",
        {"point": asked.label()},
        "F",
        {"asked_point": asked.id, "asked_category": asked.category},
        suffix=f"/{asked.id}",
    )
    return _sentence_item("SINGLE-F", point, instance, question)


def single_f(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """Each sentence with points it does not contain: gold F.

    `group-pairs` asks, for every point and every other point of its group, the other point's
    first sentence (the first that does not show the asked point's form, with
    `skip_literal_matches`): Σ n(n−1) questions over the groups, as the released bank.
    """
    assert isinstance(params, SingleFParams)
    if params.negatives_from == "group-pairs":
        for asked, other in bank.group_pairs():
            usable = (i for i in bank.sentences[other.id] if not bank.literal_match(asked, i.text))
            instance = next(usable, None)
            if instance is not None:
                yield _single_f_item(other, instance, asked)
        return
    for point in bank.points:
        pool = bank.negatives(point, params.negatives_from)
        for position, instance in enumerate(bank.sentences[point.id]):
            usable = [q for q in pool if not bank.literal_match(q, instance.text)]
            if not usable:
                continue
            for step in range(min(params.negatives_per_sentence, len(usable))):
                yield _single_f_item(point, instance, usable[(position + step) % len(usable)])


def batch_t(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """One point with its sentences (up to `size`): gold all T."""
    assert isinstance(params, BatchTParams)
    for point in bank.points:
        picked = bank.sentences[point.id][: params.size]
        if len(picked) >= 2:
            yield _batch_item("BATCH-T", f"BATCH-T/{point.id}", point, picked, "T" * len(picked))


def batch_f(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """`size` sentences of other points: gold all F.

    `group-pairs` asks every point against the sentences of each other point of its group in
    turn (Σ n(n−1) questions, as the released bank); the other sources fill `size` sentences
    from the points they rank first.
    """
    assert isinstance(params, BatchFParams)
    if params.negatives_from == "group-pairs":
        for asked, other in bank.group_pairs():
            picked = [i for i in bank.sentences[other.id] if not bank.literal_match(asked, i.text)][
                : params.size
            ]
            if len(picked) >= 2:
                yield _batch_item(
                    "BATCH-F", f"BATCH-F/{asked.id}/{other.id}", asked, picked, "F" * len(picked)
                )
        return
    for point in bank.points:
        stream = (
            instance
            for other in bank.negatives(point, params.negatives_from)
            for instance in bank.sentences[other.id]
            if not bank.literal_match(point, instance.text)
        )
        for question in range(params.questions_per_point):
            picked = [instance for _, instance in zip(range(params.size), stream, strict=False)]
            if len(picked) < 2:
                break
            yield _batch_item(
                "BATCH-F", f"BATCH-F/{point.id}/{question}", point, picked, "F" * len(picked)
            )


def sim_gra(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """Each sentence with its own point and the most similar others as lettered options."""
    assert isinstance(params, SimGraParams)
    for point in bank.points:
        distractors: list[GrammarPoint] = []
        labels = {point.label()}
        for other in bank.similar(point):
            if len(distractors) == params.options - 1:
                break
            if other.label() not in labels:
                distractors.append(other)
                labels.add(other.label())
        if not distractors:
            continue
        for instance in bank.sentences[point.id]:
            choices = [point, *distractors]
            bank.rng("SIM-GRA", instance.id).shuffle(choices)
            options = [
                {"key": LETTERS[i], "text": p.label(), "point": p.id} for i, p in enumerate(choices)
            ]
            answer = LETTERS[choices.index(point)]
            question = _Question("sim", {"options": options}, answer, {"options": options})
            yield _sentence_item("SIM-GRA", point, instance, question)


def cat_gra(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """Each sentence with every point of its group as options, answered by code.

    A group the table names (`group`) is asked whatever its size; a category needs
    `min_points` points. A point in no group makes no question.
    """
    assert isinstance(params, CatGraParams)
    for point in bank.points:
        members = bank.group(point)
        if not members or (point.group is None and len(members) < params.min_points):
            continue
        options = [{"key": p.id, "text": p.label(), "point": p.id} for p in members]
        four_digits = all(re.fullmatch(r"\d{4}", p.id) for p in members)
        for instance in bank.sentences[point.id]:
            variables = {"options": options, "four_digits": four_digits}
            question = _Question("cat", variables, point.id, {"options": options})
            yield _sentence_item("CAT-GRA", point, instance, question)


def con_ins_f10(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """The first `size` confusing instances of a point, in table order: gold all F."""
    assert isinstance(params, ConInsF10Params)
    for point in bank.points:
        picked = bank.confusers.get(point.id, [])[: params.size]
        if len(picked) >= params.min_size:
            yield _batch_item(
                "CON-INS-F10", f"CON-INS-F10/{point.id}", point, picked, "F" * len(picked)
            )


def con_ins_t5f5(bank: BankInputs, params: BaseModel) -> Iterator[Item]:
    """Examples and confusing instances of a point, shuffled: gold T or F per sentence."""
    assert isinstance(params, ConInsT5F5Params)
    for point in bank.points:
        examples = bank.sentences[point.id]
        confusers = bank.confusers.get(point.id, [])
        if len(examples) < params.examples or len(confusers) < params.confusers:
            continue
        rng = bank.rng("CON-INS-T5F5", point.id)
        picked = rng.sample(examples, params.examples) + rng.sample(confusers, params.confusers)
        rng.shuffle(picked)
        gold = "".join("T" if i.kind == "example" else "F" for i in picked)
        yield _batch_item("CON-INS-T5F5", f"CON-INS-T5F5/{point.id}", point, picked, gold)


BANKS: dict[str, Callable[[BankInputs, BaseModel], Iterator[Item]]] = {
    "SINGLE-T": single_t,
    "SINGLE-F": single_f,
    "BATCH-T": batch_t,
    "BATCH-F": batch_f,
    "SIM-GRA": sim_gra,
    "CAT-GRA": cat_gra,
    "CON-INS-F10": con_ins_f10,
    "CON-INS-T5F5": con_ins_t5f5,
}


def build_banks(
    points: list[GrammarPoint],
    instances: Iterable[Instance],
    tasks: dict[str, BaseModel],
    options: BaseModel,
    resources: BuildResources,
) -> list[Item]:
    """Items of every requested bank, bank by bank in the recipe's order."""
    assert isinstance(options, BankParams)
    instances = list(instances)
    bank = BankInputs(
        points=points,
        sentences=bank_sentences(points, instances, options.sentences),
        confusers=confusing_sentences(points, instances),
        options=options,
        resources=resources,
    )
    items: list[Item] = []
    for name, params in tasks.items():
        items.extend(BANKS[name](bank, params))
    return items
