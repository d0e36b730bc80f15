"""`report.md` of a build: what was read, what each stage kept, flagged and removed, the banks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import BuildManifest
from ..runtime.rundir import iter_jsonl
from ..sources.duplicates import describe
from .markdown import markdown_table, status_text
from .mdtext import Markdown, code_span, md_text
from .parts import PartsOfKind

BuildSection = Callable[[BuildManifest, Path], list[str]]
BUILD_SECTIONS: PartsOfKind[BuildSection] = PartsOfKind("build-section")
"""Recipes' own sections of a build's report, report parts of kind `build-section` (markdown
lines from the manifest; none when the build is not theirs)."""


def build_report_section(name: str, section: BuildSection) -> BuildSection:
    """Register a section of the build report: `section(manifest, folder)` returns its lines.

    `folder` is the build's run folder, for a section that reads the records written there.
    """
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
    rows = [*found.rows[:-1], [Markdown("**total**"), *found.rows[-1][1:]]]
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


def _generated(folder: Path) -> Counter[str]:
    """How many sentences the agents wrote, by status, as `instances.jsonl` holds them."""
    return Counter(
        str(i.get("status"))
        for i in iter_jsonl(folder / "instances.jsonl", skip_unreadable=True)
        if i.get("origin") == "agent"
    )


def _stages_and_sections(manifest: BuildManifest, folder: Path) -> list[str]:
    """The stages' counts, then the recipes' own sections."""
    lines: list[str] = []
    if manifest.stages:
        lines += ["", "## Stages", "", "What each stage read, kept, flagged and removed.", ""]
        lines += markdown_table(
            ["stage", "counts"],
            [[s, ", ".join(f"{k} {v}" for k, v in c.items())] for s, c in manifest.stages.items()],
        )
    for section in BUILD_SECTIONS.all().values():
        lines += section(manifest, folder)
    return lines


def render_build_report(manifest: BuildManifest, folder: Path) -> str:
    """The markdown report of a build run, from its manifest and the records in `folder`."""
    source = dict(manifest.source or {})
    files = source.pop("files", [])
    path = source.pop("path", "?")
    repeated = source.pop("duplicates", None)
    described = ", ".join(f"{v} {k}" for k, v in source.items() if isinstance(v, int | str))
    counts = manifest.counts
    lines = [
        f"# Build report: {md_text(manifest.run_id)}",
        "",
        f"- recipe: {md_text(manifest.recipe)}; source {code_span(path)}"
        + (f" ({md_text(described)})" if described else ""),
        f"- agents: {manifest.agents}"
        + (f" ({', '.join(map(md_text, manifest.models))})" if manifest.models else ""),
        f"- status: {status_text(manifest)}",
        f"- {counts.requests_line()}, {counts.cache_hits} cache hits, "
        f"{counts.failed} failures"
        + (" (`failures.jsonl`)" if (folder / "failures.jsonl").is_file() else ""),
        "",
    ]
    lines += _files_lines(files, path)
    repeats = describe(repeated)
    if repeats:
        lines += ["## Duplicates", "", *repeats, ""]
    lines += ["## Banks", ""]
    lines += markdown_table(["task", "items"], [[t, n] for t, n in manifest.tasks.items()])
    lines += _stages_and_sections(manifest, folder)
    status = _generated(folder)
    if status:
        lines += [
            "",
            "Generated instances: "
            + ", ".join(f"{n} {s}" for s, n in sorted(status.items()))
            + ". Every verdict is in `instances.jsonl` (provenance.checks).",
        ]
    if manifest.flagged:
        lines += ["", f"{manifest.flagged} records flagged for review."]
    lines += _review_lines(manifest)
    warnings = (manifest.artifacts or {}).get("warnings")
    if warnings:
        lines += [
            "",
            f"## Warnings ({len(warnings)})",
            "",
            *(f"- {md_text(w)}" for w in warnings[:50]),
        ]
    lines.append("")
    return "\n".join(lines)


def _review_lines(manifest: BuildManifest) -> list[str]:
    """What the report says of the review file and the decisions imported from it."""
    if not manifest.review:
        return []
    lines: list[str] = []
    lines += [
        f"Review file: {code_span(manifest.review.get('file'))} "
        f"({manifest.review.get('rows')} rows)."
    ]
    decisions = manifest.review.get("decisions")
    if decisions:
        listed = ", ".join(f"{n} {d}" for d, n in decisions.items())
        lines += [
            f"Decisions imported from {code_span(manifest.review.get('imported_from'))}: "
            f"{md_text(listed)}."
        ]
    validation = manifest.review.get("validation")
    if validation:
        lines += [
            f"Human validation: {validation['valid']} of {validation['decided']} sampled "
            f"sentences judged valid ({validation['valid_pct']:.1f} %); "
            f"{validation['sampled']} were sampled."
        ]
    return lines
