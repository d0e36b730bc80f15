"""EduEval's review file (Appendix B): flagged items and a sample of the rest, per item.

A reviewer fills `decision` (`accept`, `reject`, or `edit` with `new_level`), `reviewer` and
`note`; `gramagents review RUN FILE` takes rejected items out of the dataset, gives edited
ones their new level, and records who decided what in each decided item (`meta.review`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...api import (
    REVIEWS,
    BuildView,
    InputError,
    Item,
    ReviewSpec,
    csv_rows,
    read_dataset,
    read_utf8,
    write_atomic,
)
from .sources import EduItem

if TYPE_CHECKING:
    from ...api import BuildResult, ReviewJob, ReviewSettings

COLUMNS = [
    "item_id",
    "level",
    "task",
    "flags",
    "prompt",
    "decision",
    "new_level",
    "reviewer",
    "note",
]


def review_rows(view: BuildView, seed: int, sample: int) -> list[dict[str, str]]:
    """Every flagged item, and `sample` unflagged ones drawn with the seed."""
    items = view.of_type(EduItem)
    flagged = [i for i in items if i.id in view.flags]
    rest = [i for i in items if i.id not in view.flags]
    drawn = random.Random(seed).sample(rest, min(sample, len(rest)))
    return [
        {
            "item_id": i.id,
            "level": i.level,
            "task": i.task,
            "flags": "; ".join(view.flags.get(i.id, [])),
            "prompt": i.prompt[:300],
            "decision": "",
            "new_level": "",
            "reviewer": "",
            "note": "",
        }
        for i in [*flagged, *drawn]
    ]


def write_item_review(
    folder: Path, view: BuildView, settings: ReviewSettings, seed: int
) -> dict[str, Any] | None:
    """`review.csv`: one row per item to look at."""
    rows = review_rows(view, seed, settings.sample)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(folder / "review.csv", out.getvalue())
    return {"file": "review.csv", "rows": len(rows), "flagged": len(view.flags)}


def read_decisions(review: Path) -> dict[str, dict[str, str]]:
    """Rows with a decision, by item id; a bad decision is one error naming line and field."""
    text = read_utf8(review)
    decisions: dict[str, dict[str, str]] = {}
    for line, row in csv_rows(review, text, ("item_id", "decision")):
        decision = (row.get("decision") or "").strip().lower()
        if decision not in ("", "accept", "reject", "edit"):
            raise InputError(
                review,
                f"decision must be accept, reject or edit, not '{decision}'",
                line=line,
                field="decision",
            )
        if decision == "edit" and not (row.get("new_level") or "").strip():
            raise InputError(review, "an edit needs new_level", line=line, field="new_level")
        if decision:
            decisions[row["item_id"]] = row
    return decisions


def apply_item_decisions(
    items: list[Item], decisions: dict[str, dict[str, str]]
) -> tuple[list[Item], dict[str, int]]:
    """The items kept, relabelled where edited, and how many were accepted, edited, rejected."""
    kept: list[Item] = []
    counts: Counter[str] = Counter()
    for item in items:
        row = decisions.get(item.id.split("@", 1)[0])
        if row is None:
            kept.append(item)
            continue
        decision = row["decision"].strip().lower()
        note = {
            "decision": decision,
            "reviewer": row.get("reviewer") or "reviewer",
            "note": row.get("note") or "",
        }
        if decision == "reject":
            counts["rejected"] += 1
            continue
        if decision == "edit":
            item.meta["level"] = row["new_level"].strip()
            note["new_level"] = item.meta["level"]
            counts["edited"] += 1
        else:
            counts["accepted"] += 1
        item.meta["review"] = note
        kept.append(item)
    return kept, dict(counts)


def apply_item_review(job: ReviewJob) -> BuildResult:
    """Apply a reviewer's decisions to the dataset of an EduEval build.

    The run is then finished as a build is (report, manifest, viewer).
    """
    from ...api import BuildResult

    decisions = read_decisions(job.file)
    path = job.folder.file("dataset.jsonl")
    kept, counts = apply_item_decisions(read_dataset(path).items, decisions)
    job.folder.write_jsonl("dataset.jsonl", kept)
    manifest = job.manifest
    manifest.review = {
        **(manifest.review or {}),
        "imported_from": str(job.file),
        "decisions": counts,
    }
    manifest.counts = manifest.counts.model_copy(update={"items": len(kept)})
    manifest.tasks = dict(Counter(i.task for i in kept))
    manifest.hashes["dataset"] = hashlib.sha256(path.read_bytes()).hexdigest()
    job.folder.finish(manifest)
    return BuildResult(job.folder, manifest, kept, [])


REVIEWS.register(
    "edu-items", ReviewSpec(name="edu-items", write=write_item_review, apply=apply_item_review)
)
