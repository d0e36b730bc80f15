"""The syntax build's own report sections: its counts beside the paper's Tables 1 and 4.

Per question type and knowledge point, every question the trees allow (the counterpart of
Table 4) and the questions drawn (of Table 1), each with its share of the type's total, so a
point the patterns find too rarely, or one the sampling lets dominate, shows at a glance;
then candidates and drawn questions per answer category, the groups the sampling balances;
and what the distractor verifier dropped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...api import RunManifest, markdown_table
from .paper import TABLE_1, TABLE_4, shares
from .points import point_order
from .records import TYPES


def _pct(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.1f} %"


def point_rows(info: dict[str, Any]) -> list[list[Any]]:
    """Per (type, point): the paper's count of all and of drawn questions, and the build's.

    Each count is followed by its share of the type's total.
    """
    rows = []
    for kind in TYPES:
        found, drawn = info.get("candidates", {}).get(kind, {}), info.get("test", {}).get(kind, {})
        columns = (TABLE_4[kind], found, TABLE_1[kind], drawn)
        ratios = [shares(counts, kind) for counts in columns]
        for point in sorted({*TABLE_1[kind], *found, *drawn}, key=point_order):
            cells: list[Any] = [kind, point]
            for counts, share in zip(columns, ratios, strict=True):
                cells += [counts.get(point, 0), _pct(share.get(point))]
            rows.append(cells)
    return rows


def syntax_build_sections(manifest: RunManifest, folder: Path) -> list[str]:
    """The build report's syntax tables, from the manifest alone (none for another recipe)."""
    info = (manifest.artifacts or {}).get("syntax")
    if not info or "candidates" not in info:
        return []
    header = ["type", "point", "paper: all (Table 4)", "share", "here: all", "share",
              "paper: drawn (Table 1)", "share", "here: drawn", "share"]  # fmt: skip
    lines = [
        "",
        "## Syntax-QA questions beside the paper's Tables 1 and 4",
        "",
        "All: every question the trees allow; drawn: the test set (k per type, point and "
        "answer category). Shares are of the type's total; MVP's True/False questions are "
        "those of GS, SC, DO and IO, left out of the total as in the paper.",
        "",
        *markdown_table(header, point_rows(info)),
        "",
        *_verifier_lines(manifest),
        "## Syntax-QA questions per answer category",
        "",
        *markdown_table(
            ["type", "point", "category", "all", "drawn (test)", "exemplars"],
            info.get("categories", []),
        ),
    ]
    return lines


def _verifier_lines(manifest: RunManifest) -> list[str]:
    stage = next((c for c in manifest.stages.values() if "verified" in c), None)
    if stage is None:
        return []
    dropped = {k.removeprefix("dropped "): v for k, v in stage.items() if k.startswith("dropped")}
    said = ", ".join(f"{n} ({why})" for why, n in dropped.items()) or "none"
    return [
        f"The distractor verifier checked {stage['verified']} questions as they were drawn "
        f"and dropped {sum(dropped.values())}: {said}.",
        "",
    ]
