"""Proof Stand (paper §3.2 and §4.3): the four probing tasks and the translation task.

Every task draws its options (distractors and their order) with a seed; each item is asked
under `seeds` seeds (at least three), so an accuracy comes with its standard deviation over
seeds. Tasks 1-3 are also built at every number of options in `sweep`, for the degradation
of accuracy as options grow (Figure 4); the base setting (Table 3) is the paper's: Task 1
with N1g = 2 descriptions, Task 2 with N2s = 1 sentence, Task 3 with N3g = 4 points and
N3s = 2 sentences. A setting needing more points or sentences than the book gave is left
out. Only sentences that passed the back-check (and no human rejected) enter a bank, and a
minimal pair only while its sentence is still the one it was made from.

- GB-TASK1: a sentence (with its English) and N1g descriptions; the one it instantiates.
- GB-TASK2: a point and N2s sentences; those that show it (anywhere from `positives[0]` to
  `positives[1]` of them, drawn per item, so with N2s = 1 the sentence may or may not).
- GB-TASK3: a paragraph of N3s sentences of distinct points and N3g points; the N3s shown.
- GB-TASK4: a minimal pair, in an order drawn per seed; the acceptable sentence.
- GB-TRANSLATE: the generated pairs, into the book's language (or from it, or both), and the
  sentences of the translation sets given in FLORES-200's layout (`sets.py`): MIXED.

Tasks 1-3 are multiple selection, scored as the paper scores them, by accuracy: an answer is
right when the set of options picked is exactly the set that is right.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ...api import BuildResources, BuildView, GrammarPoint, Instance, Item, PromptParts
from .distractors import Owners
from .records import PointCheck, book_language
from .sets import GENERATED, TranslationSet, read_set

LETTERS = string.ascii_uppercase


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Seeded(_Params):
    """Seeds and size, for every probing task."""

    seeds: int = Field(default=3, ge=3)
    """Seeds each item is asked under (option shuffles and distractor draws); at least 3."""
    size: int | None = Field(default=None, ge=1)
    """Items per seed and setting (None: one per sentence, point or pair)."""


class Task1Params(Seeded):
    """GB-TASK1."""

    descriptions: int = Field(default=2, ge=2, le=len(LETTERS))
    """N1g: grammar descriptions shown (the paper's base setting: 2)."""
    sweep: list[int] = Field(default_factory=lambda: [2, 4, 6, 8, 10])
    """Numbers of descriptions for the degradation curve."""


class Task2Params(Seeded):
    """GB-TASK2."""

    sentences: int = Field(default=1, ge=1, le=len(LETTERS))
    """N2s: sentences shown (the paper's base setting: 1)."""
    positives: tuple[int, int] = (0, 1)
    """Fewest and most of the shown sentences that show the point (drawn per item)."""
    sweep: list[int] = Field(default_factory=lambda: [1, 2, 4, 6, 8, 10])

    @model_validator(mode="after")
    def _range(self) -> Task2Params:
        if not 0 <= self.positives[0] <= self.positives[1]:
            raise ValueError("positives is [fewest, most] with 0 <= fewest <= most")
        return self


class Task3Params(Seeded):
    """GB-TASK3."""

    points: int = Field(default=4, ge=2, le=len(LETTERS))
    """N3g: grammar points listed (the paper's base setting: 4)."""
    sentences: int = Field(default=2, ge=1)
    """N3s: sentences in the paragraph, each of its own point (the paper's: 2)."""
    sweep: list[int] = Field(default_factory=lambda: [3, 4, 6, 8, 10])
    """Numbers of points listed for the degradation curve (N3s stays)."""

    @model_validator(mode="after")
    def _enough(self) -> Task3Params:
        if self.sentences >= self.points:
            raise ValueError("points (N3g) must exceed sentences (N3s)")
        return self


class Task4Params(Seeded):
    """GB-TASK4: a minimal pair, its order drawn per seed."""


class TranslateParams(_Params):
    """GB-TRANSLATE."""

    direction: Literal["into", "from", "both"] = "into"
    """`into` the book's language from English (the paper's Table 3), `from` it, or both."""
    size: int | None = Field(default=None, ge=1)
    """Generated pairs translated (None: every accepted one)."""
    sets: list[TranslationSet] = Field(default_factory=list)
    """Sets in FLORES-200's layout translated beside the generated pairs (MIXED, Table 1)."""

    @model_validator(mode="after")
    def _distinct(self) -> TranslateParams:
        names = [s.name for s in self.sets]
        if GENERATED in names or len(set(names)) != len(names):
            raise ValueError(f"set names must differ from each other and from {GENERATED}")
        return self


class BankOptions(_Params):
    """The builder's own options (none yet)."""


TASK_PARAMS: dict[str, type[BaseModel]] = {
    "GB-TASK1": Task1Params,
    "GB-TASK2": Task2Params,
    "GB-TASK3": Task3Params,
    "GB-TASK4": Task4Params,
    "GB-TRANSLATE": TranslateParams,
}


class Material:
    """What the banks are built from: points, their accepted sentences, the usable pairs."""

    def __init__(self, view: BuildView) -> None:
        self.points = {p.id: p for p in view.of_type(GrammarPoint)}
        instances = view.of_type(Instance)
        self.sentences = [
            i
            for i in instances
            if i.kind == "example" and i.status == "accepted" and i.point_id in self.points
        ]
        by_id = {s.id: s for s in self.sentences}
        self.by_point: dict[str, list[Instance]] = {}
        for sentence in self.sentences:
            self.by_point.setdefault(sentence.point_id, []).append(sentence)
        self.pairs = [
            i
            for i in instances
            if i.kind == "pair"
            and i.status == "accepted"
            and (s := by_id.get(str(i.annotations.get("sentence_id")))) is not None
            and s.text == i.annotations.get("correction")
        ]
        self.language = book_language(view.context)
        self.owners = Owners(self.sentences, self.pairs, view.of_type(PointCheck))

    def point(self, sentence: Instance) -> GrammarPoint:
        """The grammar point of a sentence."""
        return self.points[sentence.point_id]


def _units(units: list[Any], size: int | None, seed: int, task: str) -> list[Any]:
    if size is None or size >= len(units):
        return units
    chosen = random.Random(f"{seed}/{task}/units").sample(range(len(units)), size)
    return [units[i] for i in sorted(chosen)]


def _options(texts: list[str]) -> list[dict[str, str]]:
    return [{"key": LETTERS[k], "text": t} for k, t in enumerate(texts)]


def _meta(point: GrammarPoint, seed: int, n: int, base: bool, **more: Any) -> dict[str, Any]:
    return {
        "point": point.id,
        "name": point.name,
        "category": point.category,
        "language": point.language,
        "seed": seed,
        "n_options": n,
        "base": base,
        **more,
    }


def _settings(base: int, sweep: list[int]) -> list[int]:
    return [base, *sorted({n for n in sweep if n != base})]


def _description(point: GrammarPoint) -> str:
    return f"{point.name}: {point.description}"


def task1(m: Material, p: Task1Params, seed: int) -> Iterator[Item]:
    """A sentence and N1g descriptions, one of them its point's."""
    units = _units(m.sentences, p.size, seed, "GB-TASK1")
    for n in _settings(p.descriptions, p.sweep):
        if n > len(m.points):
            continue
        for sentence in units:
            point = m.point(sentence)
            others = sorted(k for k in m.points if k != point.id)
            for s in range(p.seeds):
                rng = random.Random(f"{seed}/GB-TASK1/{n}/{s}/{sentence.id}")
                drawn = m.owners.draw(rng, others, n - 1, lambda k, x=sentence: m.owners.owns(k, x))
                if drawn is None:
                    continue
                shown = [point, *(m.points[k] for k in drawn)]
                rng.shuffle(shown)
                options = _options([_description(x) for x in shown])
                gold = [LETTERS[shown.index(point)]]
                yield Item(
                    id=f"GB-TASK1/n{n}/s{s}/{sentence.id}",
                    task="GB-TASK1",
                    prompt=PromptParts(
                        template="grammar-book/task1.md",
                        vars={
                            "language": m.language,
                            "sentence": sentence.text,
                            "english": sentence.annotations.get("english", ""),
                            "options": options,
                        },
                    ),
                    answer=gold,
                    meta=_meta(
                        point,
                        s,
                        n,
                        n == p.descriptions,
                        positives=[1, 1],
                        sentence=sentence.id,
                    ),
                )


def task2(m: Material, p: Task2Params, seed: int) -> Iterator[Item]:
    """A point and N2s sentences, from `positives[0]` to `positives[1]` of them its own."""
    units = _units(sorted(m.by_point), p.size, seed, "GB-TASK2")
    for n in _settings(p.sentences, p.sweep):
        for point_id in units:
            point, own = m.points[point_id], m.by_point[point_id]
            others = [x for x in m.sentences if x.point_id != point_id]
            lo, hi = p.positives[0], min(p.positives[1], n, len(own))
            if lo > hi or n - lo > len(others):
                continue
            for s in range(p.seeds):
                rng = random.Random(f"{seed}/GB-TASK2/{n}/{s}/{point_id}")
                k = rng.randint(max(lo, n - len(others)), hi)
                mine = rng.sample(own, k)
                drawn = m.owners.draw(
                    rng, others, n - k, lambda x, mine=point_id: m.owners.owns(mine, x)
                )
                if drawn is None:
                    continue
                shown = mine + drawn
                rng.shuffle(shown)
                options = _options([x.text for x in shown])
                gold = [LETTERS[i] for i, x in enumerate(shown) if x.point_id == point_id]
                yield Item(
                    id=f"GB-TASK2/n{n}/s{s}/{point_id}",
                    task="GB-TASK2",
                    prompt=PromptParts(
                        template="grammar-book/task2.md",
                        vars={
                            "language": m.language,
                            "point": _description(point),
                            "options": options,
                        },
                    ),
                    answer=gold,
                    meta=_meta(point, s, n, n == p.sentences, positives=[lo, hi]),
                )


def task3(m: Material, p: Task3Params, seed: int) -> Iterator[Item]:
    """A paragraph of N3s sentences of distinct points, and N3g points to pick them from."""
    usable = sorted(m.by_point)
    units = _units(usable, p.size, seed, "GB-TASK3")
    for n in _settings(p.points, p.sweep):
        if n <= p.sentences or n > len(m.points) or p.sentences > len(usable):
            continue
        for anchor in units:
            for s in range(p.seeds):
                rng = random.Random(f"{seed}/GB-TASK3/{n}/{s}/{anchor}")
                shown_ids = [
                    anchor,
                    *rng.sample([u for u in usable if u != anchor], p.sentences - 1),
                ]
                paragraph = [rng.choice(m.by_point[k]) for k in shown_ids]
                rest = sorted(k for k in m.points if k not in shown_ids)
                drawn = m.owners.draw(
                    rng,
                    rest,
                    n - p.sentences,
                    lambda k, shown=paragraph: any(m.owners.owns(k, x) for x in shown),
                )
                if drawn is None:
                    continue
                listed = shown_ids + drawn
                rng.shuffle(listed)
                options = _options([_description(m.points[k]) for k in listed])
                gold = sorted(LETTERS[listed.index(k)] for k in shown_ids)
                yield Item(
                    id=f"GB-TASK3/n{n}/s{s}/{anchor}",
                    task="GB-TASK3",
                    prompt=PromptParts(
                        template="grammar-book/task3.md",
                        vars={
                            "language": m.language,
                            "count": p.sentences,
                            "paragraph": " ".join(x.text for x in paragraph),
                            "options": options,
                        },
                    ),
                    answer=gold,
                    meta=_meta(
                        m.points[anchor],
                        s,
                        n,
                        n == p.points,
                        positives=[p.sentences, p.sentences],
                        sentences=[x.id for x in paragraph],
                    ),
                )


def task4(m: Material, p: Task4Params, seed: int) -> Iterator[Item]:
    """A minimal pair in a seeded order; the grammatical sentence is the answer."""
    for pair in _units(m.owners.usable_pairs(m.pairs), p.size, seed, "GB-TASK4"):
        point = m.points[pair.point_id]
        good, bad = str(pair.annotations["correction"]), pair.text
        for s in range(p.seeds):
            first_good = random.Random(f"{seed}/GB-TASK4/{s}/{pair.id}").random() < 0.5
            options = _options([good, bad] if first_good else [bad, good])
            yield Item(
                id=f"GB-TASK4/s{s}/{pair.id}",
                task="GB-TASK4",
                prompt=PromptParts(
                    template="grammar-book/task4.md",
                    vars={"language": m.language, "point": _description(point), "options": options},
                ),
                answer="A" if first_good else "B",
                meta=_meta(point, s, 2, True, pair=pair.id),
            )


def _translation_item(
    m: Material, ident: str, direction: str, english: str, target: str, meta: dict[str, Any]
) -> Item:
    source, reference, languages = english, target, ("English", m.language)
    if direction == "from":
        source, reference, languages = target, english, (m.language, "English")
    return Item(
        id=ident,
        task="GB-TRANSLATE",
        prompt=PromptParts(
            template="grammar-book/translate.md",
            vars={
                "source_language": languages[0],
                "target_language": languages[1],
                "source": source,
            },
        ),
        answer=reference,
        meta={**meta, "direction": direction, "source": source},
    )


def _generated(m: Material, p: TranslateParams, seed: int, directions: list[str]) -> list[Item]:
    items = []
    for sentence in _units(m.sentences, p.size, seed, "GB-TRANSLATE"):
        point = m.point(sentence)
        meta = {"set": GENERATED, "point": point.id, "category": point.category,
                "language": point.language, "sentence": sentence.id}  # fmt: skip
        english = str(sentence.annotations.get("english", ""))
        for direction in directions:
            ident = f"GB-TRANSLATE/{direction}/{sentence.id}"
            items.append(_translation_item(m, ident, direction, english, sentence.text, meta))
    return items


def _set_items(m: Material, spec: TranslationSet, directions: list[str]) -> list[Item]:
    pairs = read_set(spec)
    items = []
    for line, (english, target) in enumerate(zip(pairs.english, pairs.target, strict=True)):
        meta = {"set": spec.name, "line": line + 1, "file": pairs.files[1]}
        for direction in directions:
            ident = f"GB-TRANSLATE/{direction}/{spec.name}:{line + 1}"
            items.append(_translation_item(m, ident, direction, english, target, meta))
    return items


def translate(m: Material, p: TranslateParams, seed: int) -> Iterator[Item]:
    """The accepted sentence pairs and each set's, into the book's language, from it, or both.

    The sets take turns (a generated pair, a sentence of each set, ...), so that
    `gramagents eval --limit N` asks some of every set.
    """
    directions = ["into", "from"] if p.direction == "both" else [p.direction]
    groups = [_generated(m, p, seed, directions), *(_set_items(m, s, directions) for s in p.sets)]
    step = len(directions)
    for start in range(0, max((len(g) for g in groups), default=0), step):
        for group in groups:
            yield from group[start : start + step]


def unit_major(items: list[Item], unit: str) -> list[Item]:
    """Items of one unit together (its settings, then seeds), units in their first order.

    Each item names its unit as its `meta.question`, so that `gramagents eval --limit N`
    takes every setting and seed of the units it samples.
    """
    first: dict[str, int] = {}
    for item in items:
        first.setdefault(str(item.meta[unit]), len(first))
        item.meta["question"] = f"{unit}/{item.meta[unit]}"
    return sorted(items, key=lambda item: first[str(item.meta[unit])])


UNITS = {"GB-TASK1": "sentence", "GB-TASK2": "point", "GB-TASK3": "point", "GB-TASK4": "pair"}
BUILDERS = {
    "GB-TASK1": task1,
    "GB-TASK2": task2,
    "GB-TASK3": task3,
    "GB-TASK4": task4,
    "GB-TRANSLATE": translate,
}


def build_banks(
    view: BuildView, tasks: dict[str, BaseModel], options: BaseModel, resources: BuildResources
) -> list[Item]:
    """Every requested bank, in the recipe's order."""
    material = Material(view)
    items: list[Item] = []
    for name, params in tasks.items():
        made = list(BUILDERS[name](material, params, resources.seed))  # type: ignore[operator]
        items += unit_major(made, UNITS[name]) if name in UNITS else made
    resources.counts.update(material.owners.counts)
    return items
