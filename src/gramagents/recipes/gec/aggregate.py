"""M2 scores of a model's corrections: per grammar item, per CEFR level and overall.

Each grammar item is scored as `errant_compare` scores its M2 file: sentence by sentence in
order, the reference annotator that is best for the running totals is chosen. "All Ref" uses
every reference; "Single Ref" (targeted recall, CTSEG §5.2) only the Step 2 reference, which
uses the grammar item. Levels and the whole set are macro averages over items (Table 3).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...api import Aggregate
from .m2 import Counts, choose, prf

LEVEL_ORDER = ("A1", "A2", "B1", "B2", "C1", "C2")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _item_scores(records: list[dict[str, Any]]) -> dict[str, Any]:
    every = Counts()
    single = Counts()
    for record in sorted(records, key=lambda r: r["meta"].get("position", 0)):
        details = record.get("details") or {}
        per_reference = details.get("per_reference") or {}
        steps = details.get("steps") or {}
        if not per_reference:
            continue
        candidates = {k: Counts(*v) for k, v in per_reference.items()}
        every = every + choose(candidates.values(), every)
        step2 = [c for k, c in candidates.items() if steps.get(k) == 2] or list(candidates.values())
        single = single + choose(step2, single)
    p, r, f = prf(every)
    return {
        "p": p,
        "r": r,
        "f0.5": f,
        "r_single": prf(single)[1],
        "sentences": len(records),
        "counts": [every.tp, every.fp, every.fn],
    }


def aggregate_m2(records: list[dict[str, Any]]) -> Aggregate:
    """Macro P, R, F0.5 and targeted recall, with per-item and per-level tables."""
    by_item: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("details"):
            by_item[record["meta"]["point"]].append(record)
    items = []
    for point, group in by_item.items():
        meta = group[0]["meta"]
        items.append(
            {
                "item": point,
                "level": meta.get("level"),
                "name": meta.get("name", ""),
                **_item_scores(group),
            }
        )
    levels = {}
    for level in sorted(
        {str(i["level"]) for i in items},
        key=lambda x: (LEVEL_ORDER.index(x) if x in LEVEL_ORDER else 99, x),
    ):
        members = [i for i in items if str(i["level"]) == level]
        levels[level] = {k: _mean([i[k] for i in members]) for k in ("p", "r", "f0.5", "r_single")}
    overall = {k: _mean([i[k] for i in items]) for k in ("p", "r", "f0.5", "r_single")}
    return Aggregate(
        scores={
            "f0.5": overall["f0.5"],
            "p": overall["p"],
            "r": overall["r"],
            "targeted_recall_single": overall["r_single"],
            "targeted_recall_all": overall["r"],
        },
        tables={"items": items, "levels": levels, "overall": overall},
        units={str(i["item"]): i["f0.5"] for i in items},
    )
