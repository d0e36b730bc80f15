"""`report.md` of a build: what was read, what each stage kept, flagged and removed, the banks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..plugins import Registry
from ..records import Instance, RunManifest
from ..sources.duplicates import describe
from ..workflow.nodes import BuildView
from .markdown import markdown_table

BuildSection = Callable[[RunManifest, BuildView], list[str]]
BUILD_SECTIONS: Registry[BuildSection] = Registry("build report section")
"""Recipes' own parts of a build's `report.md` (markdown lines; none for another recipe's run)."""


def build_report_section(name: str, section: BuildSection) -> BuildSection:
    """Register a section of the build report (`section(manifest, view)` returns lines)."""
    return BUILD_SECTIONS.register(name, section)


@dataclass
class FilesTable:
    """The per-file counts of a build's source, as the report and the viewer show them."""

    header: list[str]
    rows: list[list[Any]]
    """One row per file (its path relative to the source), then the total row."""
    reasons: list[tuple[str, int]]
    """Why lines were refused, most frequent first."""


def files_table(files: list[dict[str, Any]], root: str | None) -> FilesTable | None:
    """Per source file, what the reader counted, with a total row, and why lines were refused."""
    if not files:
        return None
    keys = [k for k, v in files[0].items() if k != "file" and not isinstance(v, dict)]
    rows = [[_relative(f["file"], root), *(f.get(k, 0) for k in keys)] for f in files]
    total = [
        sum(f.get(k, 0) for f in files) if isinstance(files[0].get(k), int) else "" for k in keys
    ]
    reasons: Counter[str] = Counter()
    for entry in files:
        reasons.update(entry.get("reasons") or {})
    return FilesTable(["file", *keys], [*rows, ["total", *total]], reasons.most_common())


def _files_lines(files: list[dict[str, Any]], root: str) -> list[str]:
    found = files_table(files, root)
    if found is None:
        return []
    rows = [*found.rows[:-1], ["**total**", *found.rows[-1][1:]]]
    lines = ["## Source files", "", *markdown_table(found.header, rows), ""]
    if found.reasons:
        lines += ["Why lines were refused (what the rules could not read):", ""]
        lines += markdown_table(["reason", "lines"], [list(r) for r in found.reasons]) + [""]
    return lines


def _relative(file: str, root: str | None) -> str:
    if root is None:
        return file
    try:
        return str(Path(file).relative_to(root))
    except ValueError:
        return file


def _review_lines(review: dict[str, Any]) -> list[str]:
    if not review:
        return []
    lines = [f"Review file: `{review.get('file')}` ({review.get('rows')} rows)."]
    decisions = review.get("decisions")
    if decisions:
        listed = ", ".join(f"{n} {d}" for d, n in decisions.items())
        lines += [f"Decisions imported from `{review.get('imported_from')}`: {listed}."]
    validation = review.get("validation")
    if validation:
        lines += [
            f"Human validation: {validation['valid']} of {validation['decided']} sampled "
            f"sentences judged valid ({validation['valid_pct']:.1f} %); "
            f"{validation['sampled']} were sampled."
        ]
    return lines


def render_build_report(manifest: RunManifest, view: BuildView) -> str:
    """The markdown report of a build run."""
    source = dict(manifest.source or {})
    files = source.pop("files", [])
    path = source.pop("path", "?")
    repeated = source.pop("duplicates", None)
    described = ", ".join(f"{v} {k}" for k, v in source.items() if isinstance(v, int | str))
    counts = manifest.counts
    lines = [
        f"# Build report: {manifest.run_id}",
        "",
        f"- recipe: {manifest.recipe}; source `{path}`" + (f" ({described})" if described else ""),
        f"- agents: {manifest.agents}"
        + (f" ({', '.join(manifest.models)})" if manifest.models else ""),
        f"- {counts.requests_sent} requests sent, {counts.cache_hits} cache hits, "
        f"{counts.failed} failures (`failures.jsonl`)",
        "",
    ]
    lines += _files_lines(files, path)
    repeats = describe(repeated)
    if repeats:
        lines += ["## Duplicates", "", *repeats, ""]
    lines += ["## Banks", ""]
    lines += markdown_table(["task", "items"], [[t, n] for t, n in manifest.tasks.items()])
    if manifest.stages:
        lines += ["", "## Stages", "", "What each stage read, kept, flagged and removed.", ""]
        lines += markdown_table(
            ["stage", "counts"],
            [[s, ", ".join(f"{k} {v}" for k, v in c.items())] for s, c in manifest.stages.items()],
        )
    status = Counter(i.status for i in view.of_type(Instance) if i.origin == "agent")
    if status:
        lines += [
            "",
            "Generated instances: "
            + ", ".join(f"{n} {s}" for s, n in sorted(status.items()))
            + ". Every verdict is in `instances.jsonl` (provenance.checks).",
        ]
    if view.flags:
        lines += ["", f"{len(view.flags)} records flagged for review."]
    lines += _review_lines(manifest.review or {})
    for section in BUILD_SECTIONS.all().values():
        added = section(manifest, view)
        if added:
            lines += ["", *added]
    warnings = (manifest.artifacts or {}).get("warnings")
    if warnings:
        lines += ["", f"## Warnings ({len(warnings)})", "", *(f"- {w}" for w in warnings[:50])]
    lines.append("")
    return "\n".join(lines)
