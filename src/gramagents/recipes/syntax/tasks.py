"""Syntax-QA tasks (`../shared/seeds/002_*`): True/False, Multiple Choice, Fill in the Blank.

Each zero-shot (`SYNTAX-TF`, `SYNTAX-MC`, `SYNTAX-FITB`) and few-shot (`...-FEWSHOT`: five
worked examples of the same knowledge point and type, chosen once per seed; three seeds by
default). True/False answers are read by the shared `tf` chain, option letters by `letter`,
fill-in-the-blank phrases by `syntax-phrase`. Every task aggregates its own records so the
report can show scores per knowledge point and per seed (mean and standard deviation).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from ...api import (
    Aggregate,
    Extraction,
    GenParams,
    ItemScore,
    TaskSpec,
    chain,
    constant,
    metric,
    task,
)

FAMILY = "syntax"
TYPE_TASKS = {"TF": "SYNTAX-TF", "MC": "SYNTAX-MC", "FITB": "SYNTAX-FITB"}
FEW_SHOT = "-FEWSHOT"
BREAKDOWNS = ("point", "category", "seed")
STOP = ("”", "\n\n")
"""A continuation ends at the closing quote of `The answer is “...`; a chat reply at its first
blank line (what follows is an explanation)."""

_LABELLED = re.compile(r"answer\s+is\s*:?\s*[“\"'‘]\s*([^”\"’\n]*)", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"^\s*(?:the\s+)?answer\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_QUOTES = " \t\"'“”‘’`*"
_QUOTED = re.compile(r"[“\"]([^”\"\n]+)[”\"]?")


def _labelled(text: str, meta: Mapping[str, Any]) -> str | None:
    """`The answer is “the board”` (a chat model's reply, or a worked example copied)."""
    match = _LABELLED.search(text)
    if match is None:
        match = _ANSWER_LINE.search(text)
    value = match.group(1).strip(_QUOTES).rstrip(".") if match else ""
    return value or None


def _continuation(text: str, meta: Mapping[str, Any]) -> str | None:
    """A base model continuing `The answer is “`: the words up to the closing quote."""
    head, quote, _ = text.partition("”")
    if not quote or "“" in head:
        return None
    return head.strip(_QUOTES).strip() or None


def _anchors(meta: Mapping[str, Any]) -> set[str]:
    """The phrases the question itself quotes (`the subject of “likes”`): never the answer.

    The question's text is the item's `asked` (its `question` is the engine's question id).
    """
    question = str(meta.get("asked") or "")
    return {m.strip(_QUOTES).rstrip(".,").strip().lower() for m in _QUOTED.findall(question)}


def _quoted(text: str, meta: Mapping[str, Any]) -> str | None:
    """The last quoted phrase of a sentence about the answer (`... subject is “She`).

    A phrase the question quotes is skipped: a reply restating the question quotes its anchor.
    """
    anchors = _anchors(meta)
    found = [m.strip(_QUOTES).rstrip(".,").strip() for m in _QUOTED.findall(text)]
    found = [f for f in found if f and f.lower() not in anchors]
    return found[-1] if found else None


def _first_line(text: str, meta: Mapping[str, Any]) -> str | None:
    """The reply's first non-empty line, without quotes and a final full stop."""
    for line in text.splitlines():
        value = line.strip(_QUOTES).strip().rstrip(".").strip(_QUOTES)
        if value:
            return value
    return None


chain(
    "syntax-phrase",
    [
        ("labelled", _labelled),
        ("continuation", _continuation),
        ("quoted", _quoted),
        ("first-line", _first_line),
    ],
    answer="text",
    own_text=("sentence",),
)


@metric("syntax-fitb")
def fitb(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """FITB accuracy and the order-aware F1 (`metrics.fitb_scores`); invalid scores 0."""
    from .metrics import fitb_scores

    said = None if extraction.invalid else str(extraction.value)
    details = {"random_f1": meta.get("random_f1")} if "random_f1" in meta else {}
    return ItemScore(fitb_scores(said, str(gold)), details)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _scores(records: list[dict[str, Any]]) -> dict[str, float]:
    names = list(records[0]["scores"])
    return {name: _mean([float(r["scores"].get(name, 0.0)) for r in records]) for name in names}


def aggregate(records: list[dict[str, Any]]) -> Aggregate:
    """A model's scores on one task: overall, per point, per seed, and per point and seed.

    A question another point borrows (MVP's True/False) counts for both points, but once in
    the overall and per-seed scores.
    """
    from .records import is_borrowed

    by_point: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_seed: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_both: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    once: list[dict[str, Any]] = []
    for record in records:
        meta = record.get("meta") or {}
        point, seed = str(meta.get("point", "?")), str(meta.get("seed", 0))
        by_point[point].append(record)
        by_both[point][seed].append(record)
        if not is_borrowed(str(record.get("item_id", ""))):
            by_seed[seed].append(record)
            once.append(record)
    tables: dict[str, Any] = {
        "n": len(once),
        "invalid": sum(1 for r in once if r.get("invalid")),
        "points": {p: {**_scores(rs), "n": len(rs)} for p, rs in by_point.items()},
        "seeds": {s: _scores(rs) for s, rs in sorted(by_seed.items())},
        "point_seeds": {
            p: {s: _scores(rs) for s, rs in sorted(seeds.items())} for p, seeds in by_both.items()
        },
    }
    random_f1 = [
        r["details"]["random_f1"] for r in records if "random_f1" in (r.get("details") or {})
    ]
    if random_f1:
        tables["random_f1"] = _mean(random_f1)
    return Aggregate(scores=_scores(once or records), tables=tables)


def _random_fitb(item: Any) -> float:
    return float(item.meta.get("random_acc", 0.0))


def _register(kind: str, description: str, **spec: Any) -> None:
    for suffix, setting in (("", "zero-shot"), (FEW_SHOT, "few-shot, five worked examples")):
        task(
            TaskSpec(
                name=f"{TYPE_TASKS[kind]}{suffix}",
                family=FAMILY,
                description=f"{description} ({setting})",
                breakdowns=BREAKDOWNS,
                aggregate=aggregate,
                **spec,
            )
        )


_register(
    "TF",
    "True/False statement about a sentence's syntax, answered True or False",
    extractor="tf",
    metric="acc",
    params=GenParams(max_tokens=10, stop=STOP),
    random_baseline=constant(0.5),
)
_register(
    "MC",
    "Multiple choice among four phrases of the sentence, answered with a letter",
    extractor="letter",
    metric="acc",
    params=GenParams(max_tokens=10, stop=STOP),
    random_baseline=constant(0.25),
)
_register(
    "FITB",
    "Fill in the blank with a phrase of the sentence",
    extractor="syntax-phrase",
    metric="syntax-fitb",
    params=GenParams(max_tokens=256, stop=STOP),
    random_baseline=_random_fitb,
)
