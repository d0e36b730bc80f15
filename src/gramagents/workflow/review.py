"""The human-review step: a file a reviewer decides on, and its import.

Every recipe's build writes a review file of a registered kind (`REVIEWS`; the recipe's
`review.kind`). The kind every recipe with generated sentences uses is `instances`, below;
a recipe may register its own (EduEval reviews whole exam items).

A build writes `review.csv` (or `.jsonl`): every generated sentence a back-checker rejected or
could not judge, plus a random sample of accepted ones. A reviewer fills `decision` with
`accept`, `reject` or `edit` (with `edited_sentence`), and `reviewer`; `gramagents review RUN
FILE` applies the decisions to the instances (each becomes a `human-review` verdict naming
the reviewer), rebuilds the banks and writes the file again with the decisions in it, so the
file round-trips.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..plugins import Registry
from ..records import CheckVerdict, GrammarPoint, Instance
from ..runtime.rundir import write_atomic
from ..sources import _text
from .nodes import BuildView

if TYPE_CHECKING:  # the build and the recipe import this module; a recipe's `__init__` does
    from ..records import BuildManifest
    from ..runtime.run import Run
    from .build import BuildResult
    from .recipe import Recipe, ReviewSettings

COLUMNS = [
    "instance_id",
    "point_id",
    "point",
    "kind",
    "sentence",
    "source_sentence",
    "correction",
    "alternatives",
    "agent_status",
    "agent_verdicts",
    "decision",
    "edited_sentence",
    "reviewer",
    "comment",
]
DECISIONS = ("accept", "reject", "edit")
HUMAN_CHECK = "human-review"
SEPARATOR = "|"
"""Between the Step 3 alternatives of a minimal pair, in the `alternatives` column."""


@dataclass(frozen=True)
class Decision:
    """One reviewed row."""

    instance_id: str
    decision: str
    edited_sentence: str
    reviewer: str
    comment: str
    line: int
    correction: str | None = None
    """For minimal pairs: the Step 2 correction as the row has it."""
    alternatives: list[str] | None = None
    """For minimal pairs: the Step 3 alternatives as the row has them."""


def review_queue(instances: list[Instance], sample: int, seed: int) -> list[Instance]:
    """Flagged generated sentences, then a sample of accepted ones, each in id order."""
    generated = [i for i in instances if i.origin == "agent"]
    decided = [i for i in generated if human_verdict(i) is not None]
    flagged = [i for i in generated if i.status != "accepted" and human_verdict(i) is None]
    accepted = [i for i in generated if i.status == "accepted" and human_verdict(i) is None]
    picked = random.Random(f"{seed}/review").sample(accepted, min(sample, len(accepted)))
    chosen = {i.id: i for i in [*decided, *flagged, *picked]}
    return sorted(chosen.values(), key=lambda i: i.id)


def human_verdict(instance: Instance) -> CheckVerdict | None:
    """The latest human verdict on `instance` (None: no reviewer decided it)."""
    checks = [c for c in instance.provenance.checks if c.check == HUMAN_CHECK]
    return checks[-1] if checks else None


def _row(instance: Instance, points: dict[str, GrammarPoint]) -> dict[str, str]:
    point = points.get(instance.point_id)
    human = human_verdict(instance)
    agent_checks = [c for c in instance.provenance.checks if c.check != HUMAN_CHECK]
    verdicts = "; ".join(
        f"{c.check}: {'pass' if c.passed else 'fail'} ({c.reason})" for c in agent_checks
    ) or "; ".join(instance.provenance.notes)
    decision = ""
    if human is not None:
        edited = "edited_from" in human.details
        decision = "edit" if edited else ("accept" if human.passed else "reject")
    status = human.details.get("agent_status", instance.status) if human else instance.status
    return {
        "instance_id": instance.id,
        "point_id": instance.point_id,
        "point": point.label() if point else "",
        "kind": instance.kind,
        "sentence": instance.text,
        "source_sentence": instance.source_text or "",
        "correction": str(instance.annotations.get("correction", "")),
        "alternatives": f" {SEPARATOR} ".join(instance.annotations.get("alternatives", [])),
        "agent_status": str(status),
        "agent_verdicts": verdicts,
        "decision": decision,
        "edited_sentence": instance.text if decision == "edit" else "",
        "reviewer": human.decided_by if human else "",
        "comment": human.reason if human else "",
    }


def write_review(
    path: Path,
    queue: list[Instance],
    points: dict[str, GrammarPoint],
    extra: dict[str, Callable[[Instance], str]] | None = None,
) -> int:
    """Write the review file (CSV with BOM for spreadsheets, or JSONL); returns its rows.

    `extra` adds columns a recipe's reviewers need (e.g. a translation), placed before the
    agent's status; reading the file back ignores them.
    """
    extra = extra or {}
    rows = [{**_row(i, points), **{k: f(i) for k, f in extra.items()}} for i in queue]
    at = COLUMNS.index("agent_status")
    columns = [*COLUMNS[:at], *extra, *COLUMNS[at:]]
    if path.suffix == ".jsonl":
        write_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_atomic(path, "\ufeff" + buffer.getvalue())
    return len(rows)


def _alternatives(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    parts = raw if isinstance(raw, list) else str(raw).split(SEPARATOR)
    return [str(p).strip() for p in parts if str(p).strip()]


def read_review(path: Path, known: dict[str, Instance]) -> list[Decision]:
    """Rows with a decision; anything malformed is one error naming line and field."""
    text = _text.read_utf8(path)
    if path.suffix == ".jsonl":
        records: list[tuple[int, dict[str, Any]]] = list(_text.iter_jsonl(path, text))
    else:
        records = list(_text.iter_csv(path, text, ("instance_id", "decision")))
    decisions = []
    for line, row in records:
        instance_id = str(row.get("instance_id") or "").strip()
        decision = str(row.get("decision") or "").strip().lower()
        if not decision:
            continue
        instance = known.get(instance_id)
        if instance is None:
            raise InputError(
                path,
                f"no generated sentence '{instance_id}' in this run",
                line=line,
                field="instance_id",
            )
        if decision not in DECISIONS:
            raise InputError(
                path,
                f"must be accept, reject or edit, not '{decision}'",
                line=line,
                field="decision",
            )
        edited = str(row.get("edited_sentence") or "").strip()
        correction = str(row.get("correction") or "").strip() or None
        alternatives = _alternatives(row.get("alternatives"))
        pair_changed = instance.kind == "pair" and (
            (correction is not None and correction != instance.annotations.get("correction"))
            or (
                alternatives is not None
                and alternatives != instance.annotations.get("alternatives", [])
            )
        )
        if decision == "edit" and not edited and not pair_changed:
            raise InputError(
                path, "an edit needs the new sentence", line=line, field="edited_sentence"
            )
        decisions.append(
            Decision(
                instance_id,
                decision,
                edited,
                str(row.get("reviewer") or "").strip(),
                str(row.get("comment") or "").strip(),
                line,
                correction if instance.kind == "pair" else None,
                alternatives if instance.kind == "pair" else None,
            )
        )
    return decisions


def apply_decisions(
    instances: dict[str, Instance], decisions: list[Decision], default_reviewer: str
) -> dict[str, int]:
    """Apply decisions in place; returns how many of each were applied.

    An edit keeps what it replaced (`edited_from`, and for pairs `annotations_from`), so a
    later accept or reject restores the agent's version.
    """
    applied = {d: 0 for d in DECISIONS}
    for decision in decisions:
        instance = instances[decision.instance_id]
        previous = human_verdict(instance)
        before = previous.details if previous is not None else {}
        first_text = str(before.get("edited_from", instance.text))
        first_annotations = dict(before.get("annotations_from", instance.annotations))
        details: dict[str, Any] = {"agent_status": before.get("agent_status", instance.status)}
        text, annotations = first_text, first_annotations
        if decision.decision == "edit":
            details["edited_from"] = first_text
            text = decision.edited_sentence or first_text
            if instance.kind == "pair":
                details["annotations_from"] = first_annotations
                annotations = {
                    "correction": decision.correction or first_annotations.get("correction", ""),
                    "alternatives": decision.alternatives
                    if decision.alternatives is not None
                    else first_annotations.get("alternatives", []),
                }
        verdict = CheckVerdict(
            check=HUMAN_CHECK,
            passed=decision.decision != "reject",
            reason=decision.comment,
            details=details,
            decided_by=decision.reviewer or default_reviewer,
        )
        checks = [c for c in instance.provenance.checks if c.check != HUMAN_CHECK]
        instances[decision.instance_id] = instance.model_copy(
            update={
                "text": text,
                "annotations": annotations,
                "status": "rejected" if decision.decision == "reject" else "accepted",
                "provenance": instance.provenance.model_copy(update={"checks": [*checks, verdict]}),
            }
        )
        applied[decision.decision] += 1
    return applied


@dataclass
class ReviewJob:
    """What applying a review file needs: the held build folder, its manifest and recipe."""

    folder: Run
    manifest: BuildManifest
    recipe: Recipe
    file: Path
    reviewer: str
    cache_path: Path | None = None
    use_cache: bool = True


ReviewWriter = Callable[[Path, BuildView, "ReviewSettings", int], "dict[str, Any] | None"]
"""`write(folder, view, settings, seed) -> manifest review info` (None: no file)."""
ReviewApplier = Callable[[ReviewJob], "BuildResult"]
"""`apply(job) -> BuildResult`: the decisions applied, the run finished."""


@dataclass(frozen=True)
class ReviewSpec:
    """A kind of review file: how a build writes it and how `gramagents review` applies it."""

    name: str
    write: ReviewWriter
    apply: ReviewApplier


REVIEWS: Registry[ReviewSpec] = Registry("review kind")


def write_instance_review(
    folder: Path, view: BuildView, settings: ReviewSettings, seed: int
) -> dict[str, Any] | None:
    """The review file of generated sentences (kept when it exists, so decisions stay)."""
    name = f"review.{settings.format}"
    queue = review_queue(view.of_type(Instance), settings.sample, seed)
    if not queue and not (folder / name).exists():
        return None
    rows = write_review(folder / name, queue, view.context.get("points", {}))
    return {"file": name, "rows": rows}


def _apply_instance_review(job: ReviewJob) -> BuildResult:
    from .build import apply_instance_review

    return apply_instance_review(job)


REVIEWS.register(
    "instances",
    ReviewSpec(name="instances", write=write_instance_review, apply=_apply_instance_review),
)
