"""Human validation of the generated sentences (paper §4.1), as the `grammar-book` review kind.

A build writes `review.csv`: a sample of `review.sample` sentence pairs (the paper's 50-100),
drawn with the build's seed from the sentences that passed the back-check, with their point,
English translation and minimal pair. The sample is the same however often the file is
written. A volunteer marks each `accept` (the sentence is grammatical and shows its point),
`reject`, or `edit` with the corrected sentence; `gramagents review RUN review.csv` records
each decision on its sentence (a `human-review` verdict), takes rejected sentences (and the
minimal pairs made from them, or from a sentence since edited) out of the banks, rebuilds the
banks, and puts the share of valid sentences (accepted as they were) in the manifest and the
build report.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...api import (
    REVIEWS,
    BuildView,
    Instance,
    ReviewSpec,
    RunError,
    apply_decisions,
    human_verdict,
    iter_jsonl,
    read_review,
    write_review,
)
from .records import BookPoint, BookSection, BookWindow, PointCheck

if TYPE_CHECKING:
    from ...api import BuildResult, ReviewJob, ReviewSettings

REVIEW_FILE = "review.csv"


def _agent_status(instance: Instance) -> str:
    human = human_verdict(instance)
    return (
        instance.status
        if human is None
        else str(human.details.get("agent_status", instance.status))
    )


def validation_sample(instances: list[Instance], size: int, seed: int) -> list[Instance]:
    """`size` sentences that passed the back-check, drawn with the seed, in id order."""
    passed = sorted(
        (
            i
            for i in instances
            if i.kind == "example" and i.origin == "agent" and _agent_status(i) == "accepted"
        ),
        key=lambda i: i.id,
    )
    picked = random.Random(f"{seed}/validation").sample(passed, min(size, len(passed)))
    return sorted(picked, key=lambda i: i.id)


def write_validation(
    folder: Path, view: BuildView, settings: ReviewSettings, seed: int
) -> dict[str, Any] | None:
    """The review file of the validation sample."""
    instances = view.of_type(Instance)
    queue = validation_sample(instances, settings.sample, seed)
    points = {p.id: p for p in view.of_type(BookPoint)}
    twins = {str(i.annotations.get("sentence_id")): i.text for i in instances if i.kind == "pair"}
    extra = {
        "english": lambda i: str(i.annotations.get("english", "")),
        "description": lambda i: points[i.point_id].description if i.point_id in points else "",
        "pages": lambda i: (
            ", ".join(map(str, points[i.point_id].pages)) if i.point_id in points else ""
        ),
        "minimal_pair": lambda i: twins.get(i.id, ""),
    }
    rows = write_review(folder / REVIEW_FILE, queue, dict(points), extra)  # type: ignore[arg-type]
    return {"file": REVIEW_FILE, "rows": rows, "sample": settings.sample}


def _load(folder: Path) -> BuildView:
    records: dict[str, Any] = {}
    for name, kind in (
        ("sections.jsonl", BookSection),
        ("windows.jsonl", BookWindow),
        ("points.jsonl", BookPoint),
        ("instances.jsonl", Instance),
        ("point_checks.jsonl", PointCheck),
    ):
        path = folder / name
        if not path.is_file() and name == "point_checks.jsonl":
            continue  # built with agents off, or before the distractor check
        if not path.is_file():
            raise RunError(f"{folder}: no {name} (was it built by the grammar-book recipe?)")
        for row in iter_jsonl(path):
            record = kind.model_validate(row)
            records[record.id] = record
    return BuildView(records)


def validation_share(instances: list[Instance]) -> dict[str, Any]:
    """How many decided sentences the reviewers accepted as they were."""
    decided = valid = 0
    for instance in instances:
        human = human_verdict(instance)
        if instance.kind != "example" or human is None:
            continue
        decided += 1
        valid += int(human.passed and "edited_from" not in human.details)
    return {
        "decided": decided,
        "valid": valid,
        "valid_pct": 100.0 * valid / decided if decided else 0.0,
    }


def apply_validation(job: ReviewJob) -> BuildResult:
    """Apply the reviewers' decisions, rebuild the banks and record the share of valid ones."""
    from ...api import BuildResult, finish_build, rebuild_banks

    folder = job.folder
    view = _load(folder.path)
    book = (job.manifest.source or {}).get("language")
    view.context["book"] = {"language": book or "the language"}
    instances = {k: r for k, r in view.records.items() if isinstance(r, Instance)}
    generated = {k: i for k, i in instances.items() if i.kind == "example" and i.origin == "agent"}
    applied = apply_decisions(instances, read_review(job.file, generated), job.reviewer)
    view.records.update(instances)
    items = rebuild_banks(job, view)
    validation = validation_share(list(instances.values()))
    validation["sampled"] = len(
        validation_sample(list(instances.values()), job.recipe.review.sample, job.manifest.seed)
    )
    job.manifest.review = {
        **(job.manifest.review or {}),
        "imported_from": str(job.file),
        "decisions": applied,
        "validation": validation,
    }
    finish_build(folder, job.manifest, job.recipe, view, items)
    return BuildResult(folder, job.manifest, items, list(view.records.values()))


REVIEWS.register(
    "grammar-book",
    ReviewSpec(name="grammar-book", write=write_validation, apply=apply_validation),
)
