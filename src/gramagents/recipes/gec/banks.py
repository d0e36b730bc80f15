"""GEC banks and the per-item M2 files (CTSEG §3.2, post-processing)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ...api import (
    BuildResources,
    Conditioning,
    GrammarPoint,
    Instance,
    Item,
    PromptParts,
    safe_name,
    write_atomic,
)
from .annotate import m2_sentence
from .m2 import M2Edit, M2Sentence, write_m2


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GecBankParams(_Params):
    """Options of the GEC bank builder (none yet)."""


class CorrectionParams(_Params):
    """GEC-BASELINE and GEC-GUIDED take no parameters."""


class PairParams(_Params):
    """Options of GEC-PAIR."""

    conditioning: Conditioning = "spaced"
    """How the two sentences are scored (models/conditioning.py): `spaced`, after a space as
    lm-evaluation-harness's BLiMP tasks score English pairs, or `bare`."""


GEC_PARAMS: dict[str, type[BaseModel]] = {
    "GEC-BASELINE": CorrectionParams,
    "GEC-GUIDED": CorrectionParams,
    "GEC-PAIR": PairParams,
}
TEMPLATES = {"GEC-BASELINE": "gec/baseline.md", "GEC-GUIDED": "gec/guided.md"}


def pairs_of(
    points: list[GrammarPoint], instances: Iterable[Instance]
) -> dict[str, list[Instance]]:
    """Accepted pairs per grammar item, the source's first, in order."""
    chosen: dict[str, list[Instance]] = {p.id: [] for p in points}
    for instance in instances:
        if (
            instance.kind == "pair"
            and instance.status == "accepted"
            and instance.point_id in chosen
        ):
            chosen[instance.point_id].append(instance)
    return chosen


def references(pair: Instance) -> list[str]:
    """Step 2 correction first, then the Step 3 alternatives."""
    return [pair.annotations["correction"], *pair.annotations.get("alternatives", [])]


def _pair_item(pair: Instance, meta: dict[str, Any], params: PairParams) -> Item:
    """A GEC-PAIR item: the Step 2 correction against the ungrammatical sentence."""
    return Item(
        id=f"GEC-PAIR/{pair.id}",
        task="GEC-PAIR",
        prompt=PromptParts(
            template="raw.md",
            vars={
                "good": pair.annotations["correction"],
                "bad": pair.text,
                "conditioning": params.conditioning,
            },
        ),
        answer="good",
        meta=meta,
    )


def build_gec_banks(
    points: list[GrammarPoint],
    instances: Iterable[Instance],
    tasks: dict[str, BaseModel],
    options: BaseModel,
    resources: BuildResources,
) -> list[Item]:
    """Items of the requested GEC banks, bank by bank, item by item."""
    chosen = pairs_of(points, instances)
    blocks: dict[str, Any] = {}
    items: list[Item] = []
    for task_name in tasks:
        for point in points:
            for position, pair in enumerate(chosen[point.id]):
                meta: dict[str, Any] = {
                    "point": point.id,
                    "name": point.name,
                    "category": point.category,
                    "level": point.level,
                    "language": point.language,
                    "position": position,
                    "pair_id": pair.id,
                    "question": pair.id,  # asked in every bank: --limit takes it in all
                    "provenance": pair.provenance.model_dump(mode="json"),
                }
                if isinstance(params := tasks[task_name], PairParams):
                    items.append(_pair_item(pair, meta, params))
                    continue
                block = blocks.get(pair.id) or blocks.setdefault(
                    pair.id, m2_sentence(pair.text, references(pair))
                )
                refs = [
                    {
                        "annotator": k,
                        "step": 2 if k == 0 else 3,
                        "text": text,
                        "edits": [
                            [e.start, e.end, e.category, e.correction]
                            for e in block.edits
                            if e.annotator == k
                        ],
                    }
                    for k, text in enumerate(references(pair))
                ]
                items.append(
                    Item(
                        id=f"{task_name}/{pair.id}",
                        task=task_name,
                        prompt=PromptParts(
                            template=TEMPLATES[task_name],
                            vars={"text": pair.text, "grammar_item": point.name},
                        ),
                        answer=pair.annotations["correction"],
                        meta={**meta, "m2_source": block.source, "references": refs},
                    )
                )
    return items


def write_m2_files(
    folder: Path, points: list[GrammarPoint], instances: list[Instance], items: list[Item]
) -> dict[str, Any]:
    """`m2/<item>.m2` per grammar item (annotator 0: Step 2, 1+: Step 3) and `m2/index.json`.

    The file names are the items' ids made safe (`runtime.paths.safe_name`); `index.json`
    gives each item's file.
    """
    known: dict[str, M2Sentence] = {}
    for item in items:
        if "references" in item.meta and item.meta["pair_id"] not in known:
            known[item.meta["pair_id"]] = M2Sentence(
                item.meta["m2_source"],
                [
                    M2Edit(edit[0], edit[1], edit[2], edit[3], ref["annotator"])
                    for ref in item.meta["references"]
                    for edit in ref["edits"]
                ],
            )
    index = []
    taken = {"index"}
    for point in points:
        pairs = pairs_of([point], instances)[point.id]
        if not pairs:
            continue
        blocks = [known.get(p.id) or m2_sentence(p.text, references(p)) for p in pairs]
        name = f"{safe_name(point.id, taken)}.m2"  # the id is data: index.json maps it
        write_atomic(folder / "m2" / name, write_m2(blocks))
        index.append(
            {
                "item": point.id,
                "level": point.level,
                "name": point.name,
                "file": name,
                "sentences": len(blocks),
                "annotators": "0: Step 2 (uses the item); 1+: Step 3 (alternatives)",
            }
        )
    write_atomic(
        folder / "m2" / "index.json", json.dumps(index, indent=2, ensure_ascii=False) + "\n"
    )
    return {"m2_files": len(index)}
