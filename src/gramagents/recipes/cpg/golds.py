"""Gold answers the released CPG-EVAL files determine, for the banks released without them.

The public files give no gold for SIM-GRA, CAT-GRA and CON-INS-T5F5, but the other banks of
the release pin most of them down:

- SIM-GRA asks SINGLE-T's sentences (rewritten) in SINGLE-T's order, row for row: the answer is
  the option whose text is the label of the SINGLE-T row at the same place. Derived only when
  both banks were read whole (as many rows, ids without gaps) and the label is among the
  options of nearly every row, which shows that the rows line up.
- CAT-GRA: the option whose label SINGLE-T pairs with the question's sentence (gold T).
- CON-INS-T5F5: each sentence is T when SINGLE-T pairs it with the question's label, F when
  CON-INS-F10 does.

An item the release leaves open gets no gold: *ambiguous* when two answers fit (two options
share the label 语气助词：吧, or the release pairs a sentence both ways), *missing* when none
does (a sentence or label written differently in another file). The counts of each derivation
go into the eval manifest (`dataset.golds`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ...api import Item
from .release_parse import Question, parse, sentence_key

RULES = {
    "SIM-GRA": "the option naming the label of the SINGLE-T row at the same place",
    "CAT-GRA": "the option whose label SINGLE-T pairs with the sentence",
    "CON-INS-T5F5": "T where SINGLE-T pairs the sentence with the label, F where CON-INS-F10 does",
}
ALIGNED_SHARE = 0.99
"""Share of SIM-GRA rows whose SINGLE-T label must be among their options for the banks to be
taken as lined up."""

Pairs = dict[tuple[str, str], set[str]]


def _source_order(items: Iterable[Item]) -> list[Item]:
    return sorted(items, key=lambda i: int(i.meta["source_id"]))


def _consecutive(items: list[Item]) -> bool:
    ids = [int(i.meta["source_id"]) for i in items]
    return bool(ids) and ids == list(range(ids[0], ids[0] + len(ids)))


def _pairs(parsed: dict[str, list[tuple[Item, Question]]]) -> Pairs:
    """(sentence key, label) -> the answers the release gives that pair."""
    pairs: Pairs = defaultdict(set)
    for bank, letter in (("SINGLE-T", "T"), ("CON-INS-F10", "F")):
        for _, question in parsed.get(bank, []):
            for sentence in question.sentences:
                pairs[sentence_key(sentence), question.label or ""].add(letter)
    return pairs


def _one(found: list[str]) -> tuple[str | None, str]:
    if len(found) == 1:
        return found[0], "derived"
    return None, "ambiguous" if found else "missing"


def _sim_gra(parsed: dict[str, list[tuple[Item, Question]]]) -> dict[str, tuple[str | None, str]]:
    rows = parsed.get("SIM-GRA", [])
    single = parsed.get("SINGLE-T", [])
    order = _source_order(i for i, _ in rows)
    labels = [q.label for _, q in sorted(single, key=lambda p: int(p[0].meta["source_id"]))]
    by_id = {i.id: q for i, q in rows}
    lined_up = (
        len(order) == len(labels)
        and _consecutive(order)
        and _consecutive(_source_order(i for i, _ in single))
    )
    if lined_up:
        shown = sum(labels[n] in {t for _, t in by_id[i.id].options} for n, i in enumerate(order))
        lined_up = shown >= ALIGNED_SHARE * len(order)
    if not lined_up:
        return {i.id: (None, "missing") for i in order}
    return {
        item.id: _one([k for k, t in by_id[item.id].options if t == labels[n]])
        for n, item in enumerate(order)
    }


def _cat_gra(
    parsed: dict[str, list[tuple[Item, Question]]], pairs: Pairs
) -> dict[str, tuple[str | None, str]]:
    found = {}
    for item, question in parsed.get("CAT-GRA", []):
        key = sentence_key(question.sentences[0])
        found[item.id] = _one([k for k, t in question.options if pairs.get((key, t)) == {"T"}])
    return found


def _t5f5(
    parsed: dict[str, list[tuple[Item, Question]]], pairs: Pairs
) -> dict[str, tuple[str | None, str]]:
    found: dict[str, tuple[str | None, str]] = {}
    for item, question in parsed.get("CON-INS-T5F5", []):
        label = question.label or ""
        answers = [pairs.get((sentence_key(s), label), set()) for s in question.sentences]
        if any(len(a) > 1 for a in answers):
            found[item.id] = (None, "ambiguous")
        elif any(not a for a in answers) or not answers:
            found[item.id] = (None, "missing")
        else:
            found[item.id] = ("".join(next(iter(a)) for a in answers), "derived")
    return found


def derive_golds(items: list[Item]) -> dict[str, dict[str, Any]]:
    """Fill in the golds the release determines; per bank, the rule and its counts.

    Items that have a gold (from their bank) keep it. Returns, for each bank derived, `rule`,
    `derived`, `ambiguous` and `missing`.
    """
    parsed: dict[str, list[tuple[Item, Question]]] = defaultdict(list)
    for item in items:
        question = parse(item.task, item.prompt.vars["text"])
        if question is not None:
            parsed[item.task].append((item, question))
    pairs = _pairs(parsed)
    results = {
        "SIM-GRA": _sim_gra(parsed),
        "CAT-GRA": _cat_gra(parsed, pairs),
        "CON-INS-T5F5": _t5f5(parsed, pairs),
    }
    stats: dict[str, dict[str, Any]] = {}
    for position, item in enumerate(items):
        if item.task not in results or item.answer is not None:
            continue
        gold, outcome = results[item.task].get(item.id, (None, "missing"))
        bank = stats.setdefault(
            item.task, {"rule": RULES[item.task], "derived": 0, "ambiguous": 0, "missing": 0}
        )
        bank[outcome] += 1
        if gold is not None:
            items[position] = item.model_copy(update={"answer": gold})
    return stats
