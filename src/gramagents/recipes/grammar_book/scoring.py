"""Reading and scoring the grammar-book tasks.

- `letter-set` reads the options a reply picks (`A, C`, `The answer is B`, `B. because...`,
  `none`); option letters only, each once; a reply that names no option and does not say
  none is invalid.
- `gb-set` and `gb-choice` score an item by accuracy (the picked set equals the right set;
  the picked letter is the right one) and carry the item's seed and number of options, which
  `seeded_accuracy` needs: per seed the accuracy of the base setting, then their mean and
  standard deviation (the headline and `acc_std`), and the same per number of options (the
  degradation curve).
- `gb-translation` reads a translation (its first line, labels and quotes removed) and
  `gb-translation` scores it with sacrebleu; `translation_scores` gives corpus spBLEU, BLEU
  and chrF++ per direction and the sentence scores' mean and standard deviation, over every
  translation set together (the paper's MIXED) and per set (the generated pairs `G`, and the
  sets given in FLORES-200's layout).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from statistics import mean, stdev
from typing import Any

from ...api import Aggregate, Extraction, ItemScore, Meta, chain, metric, nfkc, quoted_options
from . import translation

_NONE = re.compile(
    r"^\W*(none|no(ne of them| sentences?| option| grammar point)?|neither|nothing)\b[^A-Za-z]*"
    r"(shows? it|demonstrates? it|matches)?\W*$",
    re.IGNORECASE,
)
_SEPARATORS = re.compile(r"\s*(?:,|;|/|&|\band\b|\s)\s*", re.IGNORECASE)
_LABELLED = re.compile(
    r"(?:answers?|options?|choices?|sentences?|(?:grammar )?points?|descriptions?)"
    r"\s*(?:is|are|:)\s*(?:options?|sentences?|letters?)?\s*:?\s*"
    r"([A-Z](?:\s*(?:,|;|/|&|\band\b)\s*[A-Z])*)\b",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^\W*([A-Z](?:\s*(?:,|;|/|&|and)\s*[A-Z])*)(?:[.:)\-–]|\s*\n|\s*$)")


def _keys(meta: Meta) -> list[str]:
    return [str(o["key"]) for o in meta.get("options") or []]


def _letters(text: str, meta: Meta) -> list[str] | None:
    parts = [p for p in _SEPARATORS.split(text.strip()) if p]
    if not parts:
        return None
    keys = set(_keys(meta))
    if len(parts) == 1 and len(parts[0]) > 1 and parts[0].isupper():
        parts = list(parts[0])  # "AC"
    if not all(p in keys for p in parts) or len(set(parts)) != len(parts):
        return None
    return sorted(parts)


def _none(text: str, meta: Meta) -> list[str] | None:
    return [] if _NONE.match(text.strip()) else None


def _exact_list(text: str, meta: Meta) -> list[str] | None:
    return _letters(text.strip(" \t\r\n\"'`*.()[]"), meta)


def _labelled(text: str, meta: Meta) -> list[str] | None:
    found = [m for m in _LABELLED.finditer(text)]
    picks = {tuple(v) for m in found if (v := _letters(m.group(1).upper(), meta)) is not None}
    return list(picks.pop()) if len(picks) == 1 else None


def _leading(text: str, meta: Meta) -> list[str] | None:
    match = _LEADING.match(text)
    return None if match is None else _letters(match.group(1), meta)


def _option_text(text: str, meta: Meta) -> list[str] | None:
    """The options whose text the reply repeats (read as marks, `scoring/options.py`)."""
    return sorted(quoted_options(text, meta)) or None


chain(
    "letter-set",
    [
        ("none", _none),
        ("exact", _exact_list),
        ("labelled", _labelled),
        ("leading", _leading),
        ("option-text", _option_text),
    ],
)


def _seed_details(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "seed": meta.get("seed", 0),
        "n_options": meta.get("n_options"),
        "base": bool(meta.get("base", True)),
    }


@metric("gb-set")
def set_accuracy(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """1 when the options picked are exactly the right ones."""
    right = not extraction.invalid and sorted(extraction.value) == sorted(gold)
    return ItemScore({"acc": float(right)}, _seed_details(meta))


@metric("gb-choice")
def choice_accuracy(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """1 when the option picked is the right one."""
    right = not extraction.invalid and extraction.value == gold
    return ItemScore({"acc": float(right)}, _seed_details(meta))


def _sd(values: list[float]) -> float:
    return stdev(values) if len(values) > 1 else 0.0


def seeded_accuracy(records: list[dict[str, Any]]) -> Aggregate:
    """Accuracy per seed, then mean and standard deviation over seeds (base setting first)."""
    per: dict[tuple[int | None, int], list[float]] = defaultdict(list)
    base_n = None
    categories: dict[str, list[float]] = defaultdict(list)
    for record in records:
        details = record.get("details") or {}
        value = float((record.get("scores") or {}).get("acc", 0.0))
        n, seed = details.get("n_options"), int(details.get("seed", 0))
        per[(n, seed)].append(value)
        if details.get("base", True):
            base_n = n
            categories[str((record.get("meta") or {}).get("category", ""))].append(value)
    curve = []
    for n in sorted({k[0] for k in per}, key=lambda v: (v is None, v or 0)):
        seeds = {seed: mean(v) for (m, seed), v in sorted(per.items()) if m == n}
        curve.append(
            {
                "n": n,
                "mean": mean(seeds.values()),
                "std": _sd(list(seeds.values())),
                "seeds": len(seeds),
                "items": sum(len(per[(n, s)]) for s in seeds),
            }
        )
    base = next((c for c in curve if c["n"] == base_n), curve[0] if curve else None)
    scores = {"acc": base["mean"], "acc_std": base["std"]} if base else {"acc": 0.0}
    for point in curve:
        if point is not base:
            scores[f"acc_n{point['n']}"] = point["mean"]
    seeds_of_base = {s: mean(v) for (m, s), v in sorted(per.items()) if m == base_n}
    return Aggregate(
        scores=scores,
        tables={
            "base_n": base_n,
            "seeds": seeds_of_base,
            "curve": curve,
            "categories": {c: mean(v) for c, v in sorted(categories.items())},
        },
    )


_LABEL = re.compile(r"^\s*(?:translation|english|target|answer|output)[^:\n]{0,30}:\s*", re.I)


def _translation(text: str, meta: Meta) -> str | None:
    body = re.sub(r"```\w*", "", text).strip()
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if not lines:
        return None
    first = _LABEL.sub("", lines[0]).strip()
    if not first and len(lines) > 1:
        first = lines[1]
    first = first.strip("\"'“”«»„ ")
    return first or None


chain("gb-translation", [("first-line", _translation)], answer="text")


@metric("gb-translation")
def translation_metric(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """Sentence spBLEU (when available), BLEU and chrF++ of one translation."""
    hypothesis = "" if extraction.invalid else str(extraction.value)
    reference = nfkc(str(gold))  # in the form the translation was read in
    scores = translation.sentence_scores(hypothesis, reference)
    chrf = scores.pop("chrf++")
    return ItemScore(
        {"chrf++": chrf, **scores},
        {
            "hypothesis": hypothesis,
            "reference": reference,
            "source": meta.get("source", ""),
            "direction": meta.get("direction", "into"),
            "set": meta.get("set", "G"),
        },
    )


def _corpus(group: list[dict[str, Any]]) -> dict[str, Any]:
    hyps = [str(r["details"].get("hypothesis", "")) for r in group]
    refs = [str(r["details"].get("reference", "")) for r in group]
    corpus = translation.corpus_scores(hyps, refs)
    sentences = {
        name: translation.spread([float(r["scores"].get(name, 0.0)) for r in group])
        for name in corpus
    }
    sources = [len(str(r["details"].get("source", ""))) for r in group]
    return {"n": len(group), "corpus": corpus, "sentence": sentences,
            "source_chars": translation.spread([float(n) for n in sources])}  # fmt: skip


def translation_scores(records: list[dict[str, Any]]) -> Aggregate:
    """Corpus scores per direction over every set together (MIXED), then per set.

    The headline is MIXED in the first direction (into, else from); with no sets given it is
    the generated pairs alone.
    """
    by_direction: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_set: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        details = record.get("details") or {}
        direction = str(details.get("direction", "into"))
        by_direction[direction].append(record)
        by_set[str(details.get("set", "G"))][direction].append(record)
    available, why = translation.spbleu_status()
    tables: dict[str, Any] = {"spbleu": {"available": available, "why": why}, "directions": {}}
    scores: dict[str, float] = {}
    for direction, group in sorted(by_direction.items(), key=lambda kv: kv[0] != "into"):
        tables["directions"][direction] = _corpus(group)
        if not scores:  # the first direction is the headline (into, else from)
            corpus = tables["directions"][direction]["corpus"]
            scores = {"chrf++": corpus["chrf++"], **{k: v for k, v in corpus.items()
                                                    if k != "chrf++"}}  # fmt: skip
    tables["sets"] = {
        name: {d: _corpus(g) for d, g in sorted(groups.items(), key=lambda kv: kv[0] != "into")}
        for name, groups in sorted(by_set.items(), key=lambda kv: kv[0] != "G")
    }
    tables["signatures"] = translation.signatures()
    return Aggregate(scores=scores, tables=tables)
