"""The grammar-book part of a build's report: sections read, the back-check's shares, distractors.

- Which sections the extractor read and why (the section filter's and the classifier's
  decisions, with their reasons).
- The back-check as the paper's §3.3 reports it: the share of generated sentences judged
  grammatical (the paper: 93.97 %) and their mean translation quality on its 0-10 scale (7.9),
  with the share that instantiate their point; also in the manifest (`artifacts.backcheck`).
- The distractor check: what the back-checker said of other points and of the twins, and how
  many wrong options the banks dropped and replaced.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any

from pydantic import BaseModel

from ...api import (
    BuildView,
    Instance,
    RunManifest,
    build_report_section,
    iter_jsonl,
    markdown_table,
)
from .forge import BACKCHECK
from .records import BookSection, PointCheck


def backcheck_summary(instances: list[Instance]) -> dict[str, Any] | None:
    """Shares of the back-checked sentences judged grammatical and on their point, mean quality."""
    verdicts = [
        check
        for i in instances
        if i.kind == "example"
        for check in i.provenance.checks
        if check.check == BACKCHECK
    ]
    if not verdicts:
        return None
    n = len(verdicts)
    grammatical = sum(bool(v.details.get("grammatical")) for v in verdicts)
    on_point = sum(bool(v.details.get("instantiates_point")) for v in verdicts)
    quality = [float(v.details.get("translation_quality", 0)) for v in verdicts]
    return {
        "judged": n,
        "passed": sum(v.passed for v in verdicts),
        "grammatical": grammatical,
        "grammatical_pct": round(100.0 * grammatical / n, 2),
        "instantiates_pct": round(100.0 * on_point / n, 2),
        "mean_quality": round(mean(quality), 2),
    }


def _sections(view: BuildView) -> list[str]:
    found = view.of_type(BookSection)
    if not found:
        return []
    tally = Counter(s.decision or "read" for s in found)
    rows = [
        [" > ".join(s.path), ", ".join(map(str, s.pages)), s.decision or "read",
         s.decided_by or "—", s.reason or "—"]
        for s in found
    ]  # fmt: skip
    return [
        "## Sections of the book",
        "",
        f"{tally['keep']} kept, {tally['drop']} dropped, {tally['undecided']} undecided (not "
        "read) of "
        f"{len(found)}: the extractor reads the kept sections. Headings are read against word "
        "lists of the book's language, English, French and German; the classifier agent "
        "decides the sections they leave open (agents on).",
        "",
        *markdown_table(["section", "pages", "decision", "by", "reason"], rows),
        "",
    ]


def _backcheck(summary: dict[str, Any] | None, view: BuildView) -> list[str]:
    generated = [i for i in view.of_type(Instance) if i.kind == "example" and i.origin == "agent"]
    if summary is None:
        if not generated:
            return ["## Back-check", "", "No sentence was generated, so none was checked.", ""]
        return ["## Back-check", "", f"None of the {len(generated)} generated sentences got a "
                "verdict (every back-check failed): the banks hold no sentences.", ""]  # fmt: skip
    lines = [
        "## Back-check",
        "",
        f"The back-checker judged {summary['judged']} generated sentences: "
        f"{summary['grammatical_pct']:.2f} % grammatical (the paper: 93.97 %), "
        f"{summary['instantiates_pct']:.2f} % using their grammar point, mean translation "
        f"quality {summary['mean_quality']:.1f} / 10 (the paper: 7.9). {summary['passed']} "
        "passed and enter the banks.",
    ]
    if summary["passed"] == 0:
        lines.append(
            "No sentence passed: the probing banks are empty (a small agent model rejects or "
            "fails most of what it writes; use a capable one with `--agent-model`)."
        )
    return [*lines, ""]


def _distractors(manifest: RunManifest, view: BuildView) -> list[str]:
    checks = view.of_type(PointCheck)
    counts = next((c for c in manifest.stages.values() if "distractors_dropped" in c), None)
    if not checks and counts is None:
        return []
    asked = Counter((c.kind, c.applies) for c in checks)
    lines = [
        "## Distractors",
        "",
        f"The back-checker was asked whether another point applies to a sentence "
        f"{asked['distractor', True] + asked['distractor', False]} times (it does: "
        f"{asked['distractor', True]}) and whether a twin is grammatical after all "
        f"{asked['twin', True] + asked['twin', False]} times (it is: {asked['twin', True]}). "
        "A point that applies, or that has the same sentence, is never offered as wrong.",
    ]
    if counts is not None:
        lines.append(
            f"Banks: {counts['distractors_dropped']} drawn distractors dropped, "
            f"{counts['distractors_replaced']} replaced, {counts['items_left_out']} items left "
            f"out for want of a valid one, {counts['pairs_dropped']} minimal pairs dropped."
        )
    return [*lines, ""]


def folder_view(folder: Path) -> BuildView:
    """The sections, point checks and instances a grammar-book build wrote into `folder`."""
    records: dict[str, BaseModel] = {}
    for kind, name in ((BookSection, "sections.jsonl"), (PointCheck, "point_checks.jsonl"),
                       (Instance, "instances.jsonl")):  # fmt: skip
        for row in iter_jsonl(folder / name, skip_unreadable=True):
            record = kind.model_validate(row)
            records[f"{name}:{record.id}"] = record
    return BuildView(records)


def grammar_book_build_section(manifest: RunManifest, folder: Path) -> list[str]:
    """The sections, back-check and distractor parts of a grammar-book build report."""
    if not (folder / "sections.jsonl").is_file():
        return []
    view = folder_view(folder)
    if not view.of_type(BookSection):
        return []
    summary = (manifest.artifacts or {}).get("backcheck")
    if summary is None:
        summary = backcheck_summary(view.of_type(Instance))
    return _sections(view) + _backcheck(summary, view) + _distractors(manifest, view)


build_report_section("grammar-book", grammar_book_build_section)
