"""The overview of a build run, and its record tables: the review queue and the rejected outputs.

Record tables are written like the item browser's data (an index for filtering and shards of
rows), straight from the run's files, line by line.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...records import RunManifest
from ...runtime.rundir import iter_jsonl
from ...sources._text import allow_long_csv_fields
from ..build import files_table
from .items import trim
from .markup import Figures, Num, card, facts, table
from .plots import stage_chart
from .shards import ShardWriter


@dataclass(frozen=True)
class RecordTable:
    """A table of a run's records the page browses: which columns, which filters."""

    key: str
    title: str
    note: str
    columns: tuple[str, ...]
    facets: tuple[str, ...]


REJECTED = RecordTable(
    "rejected",
    "Rejected agent outputs",
    "Generated sentences a back-checker rejected (or could not judge), with its verdicts.",
    ("id", "point_id", "kind", "status", "text", "verdict", "agent", "model"),
    ("status", "kind", "agent", "check"),
)
FAILURES = RecordTable(
    "failures",
    "Failures",
    "What could not be read or made (agent calls that gave nothing usable), and what a "
    "filter removed, each with its stage and reason.",
    ("stage", "agent", "id", "reason"),
    ("stage", "agent"),
)
REVIEW_FACETS = ("agent_status", "decision", "kind", "reviewer", "flags", "level")


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    """A build file's records; a partial last line (a stopped build) is passed over."""
    return iter_jsonl(path, skip_unreadable=True)


def _verdict(instance: dict[str, Any]) -> tuple[str, str | None]:
    """The check that turned an instance down, in words, and that check's name."""
    provenance = instance.get("provenance") or {}
    for check in provenance.get("checks") or []:
        if not check.get("passed"):
            return f"{check.get('check')}: {check.get('reason') or 'failed'}", check.get("check")
    notes = provenance.get("notes") or []
    return (str(notes[-1]) if notes else instance.get("status", "")), None


def write_rejected(folder: Path, data: Path) -> dict[str, Any] | None:
    """The rejected and unjudged generated instances of a build (None: there are none)."""
    writer: ShardWriter | None = None
    for instance in _lines(folder / "instances.jsonl"):
        if instance.get("origin") != "agent" or instance.get("status") == "accepted":
            continue
        if writer is None:
            writer = ShardWriter(data / REJECTED.key, _key(data, REJECTED), list(REJECTED.facets))
        provenance = instance.get("provenance") or {}
        verdict, check = _verdict(instance)
        values = {
            "id": instance.get("id"),
            "point_id": instance.get("point_id"),
            "kind": instance.get("kind"),
            "status": instance.get("status"),
            "text": instance.get("text"),
            "verdict": verdict,
            "agent": provenance.get("agent"),
            "model": provenance.get("model"),
            "check": check,
        }
        writer.add([_text(values[c]) for c in REJECTED.columns], trim(instance), values)
    return None if writer is None else _close(writer, REJECTED)


def write_failures(folder: Path, data: Path) -> dict[str, Any] | None:
    """A build's `failures.jsonl` (None: nothing failed)."""
    writer: ShardWriter | None = None
    for failure in _lines(folder / "failures.jsonl"):
        if writer is None:
            writer = ShardWriter(data / FAILURES.key, _key(data, FAILURES), list(FAILURES.facets))
        ident = next(
            (failure[k] for k in ("instance", "item", "id", "point") if failure.get(k)), ""
        )
        values = {**failure, "id": ident}
        writer.add([_text(values.get(c)) for c in FAILURES.columns], trim(failure), values)
    return None if writer is None else _close(writer, FAILURES)


def write_review(folder: Path, manifest: RunManifest, data: Path) -> dict[str, Any] | None:
    """The build's review file (CSV or JSONL, any recipe's columns), as a record table."""
    name = (manifest.review or {}).get("file")
    path = folder / str(name) if name else None
    if path is None or not path.is_file():
        return None
    rows = _lines(path) if path.suffix == ".jsonl" else _csv_rows(path)
    writer: ShardWriter | None = None
    spec: RecordTable | None = None
    for row in rows:
        if writer is None or spec is None:
            columns = tuple(k for k in row if k)
            spec = RecordTable(
                "review",
                f"Review queue ({name})",
                "Flagged records and a sample of accepted ones, for a reviewer to decide on "
                "(`gramagents review RUN FILE` applies the decisions).",
                columns,
                tuple(f for f in REVIEW_FACETS if f in columns),
            )
            writer = ShardWriter(data / spec.key, _key(data, spec), list(spec.facets))
        writer.add([_text(row.get(c)) for c in spec.columns], trim(row), row)
    return None if writer is None or spec is None else _close(writer, spec)


def _csv_rows(path: Path) -> Iterator[dict[str, Any]]:
    allow_long_csv_fields()  # a reviewer's long edit is a row like any other
    with path.open(encoding="utf-8-sig", newline="") as handle:
        yield from csv.DictReader(handle)


def _key(data: Path, spec: RecordTable) -> str:
    return f"{data.name}/{spec.key}"


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = " ".join(str(value).split())
    return text if len(text) <= 240 else text[:239] + "…"


def _close(writer: ShardWriter, spec: RecordTable) -> dict[str, Any]:
    writer.close({"title": spec.title, "columns": list(spec.columns)})
    return {
        "key": writer.key,
        "table": spec.key,
        "title": spec.title,
        "note": spec.note,
        "columns": list(spec.columns),
        "rows": writer.count,
        "largest": writer.largest,
    }


def build_overview(folder: Path, manifest: RunManifest, figures: Figures) -> str:
    """Source, agents, counts, banks, stages, source files and warnings of a build."""
    source = dict(manifest.source or {})
    files = source.pop("files", [])
    path = source.pop("path", None)
    counts = manifest.counts
    parts = [
        facts(
            [
                ("status", manifest.status),
                ("recipe", manifest.recipe),
                ("source", path),
                *((k, v) for k, v in source.items() if isinstance(v, int | str)),
                ("agents", manifest.agents),
                ("models", ", ".join(manifest.models) or None),
                ("items", counts.items),
                ("requests sent", counts.requests_sent),
                ("cache hits", counts.cache_hits),
                ("failed", counts.failed),
                ("started", manifest.started),
                ("finished", manifest.finished),
            ]
        )
    ]
    banks = table(["task", "items"], list(manifest.tasks.items()), name="banks")
    parts.append(card("Banks", banks))
    if manifest.stages:
        names = list(dict.fromkeys(k for c in manifest.stages.values() for k in c))
        rows = [
            [s, *(Num(c.get(k), digits=0) if k in c else None for k in names)]
            for s, c in manifest.stages.items()
        ]
        body = table(["stage", *names], rows, name="stages")
        chart = stage_chart(manifest.stages)
        if chart is not None:
            body += figures.html(chart)
        parts.append(card("Stages", body, "What each stage read, kept, flagged and removed."))
    found = files_table(files, path)
    if found is not None:
        body = table(found.header, found.rows, name="files")
        if found.reasons:
            body += table(["why lines were refused", "lines"], [list(r) for r in found.reasons])
        parts.append(card("Source files", body))
    status = Counter(
        i.get("status") for i in _lines(folder / "instances.jsonl") if i.get("origin") == "agent"
    )
    if status:
        rows = [[s, n] for s, n in sorted(status.items())]
        parts.append(card("Generated instances", table(["status", "instances"], rows)))
    warnings = (manifest.artifacts or {}).get("warnings")
    if warnings:
        items = "".join(f"<li>{_escape(w)}</li>" for w in warnings[:200])
        parts.append(card(f"Warnings ({len(warnings)})", f"<ul>{items}</ul>"))
    return "".join(parts)


def _escape(value: Any) -> str:
    from html import escape

    return escape(str(value))
