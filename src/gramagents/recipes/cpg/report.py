"""The CPG recipe's report: the paper's Table 3, invalid answers per bank, the released files.

Table 3's Average is the mean of its eight columns and its RANDOM row the same mean of the
banks' chance scores (0.413 on the whole release), as the paper takes them; a run that does
not score every bank has no Average, and the note says which banks it lacks. The invalid rate
is shown for every bank, counting every answer, with or without a gold. A run over the
released files lists what was read from each file and the golds derived from the release.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ...api import Column, Layout, RunManifest, Summary, Tally, iter_jsonl, markdown_table

CPG_TABLE_3 = Layout(
    title="CPG-EVAL Table 3 layout",
    columns=(
        Column("SINGLE", "T", "SINGLE-T"),
        Column("SINGLE", "F", "SINGLE-F"),
        Column("BATCH", "T×{n}", "BATCH-T"),
        Column("BATCH", "F×{n}", "BATCH-F"),
        Column("SIM-GRA", "", "SIM-GRA"),
        Column("CAT-GRA", "", "CAT-GRA"),
        Column("CON-INS", "F×{n}", "CON-INS-F10"),
        Column("CON-INS", "T×5&F×5", "CON-INS-T5F5"),
    ),
    note="Accuracy at the sub-question level (a BATCH or CON-INS question counts each sentence; "
    "×n is the sentences per question in this run, ×4/9 questions of four and of nine).",
    average_over="all",
)
BANKS = tuple(column.task for column in CPG_TABLE_3.columns)


def _answered(
    folder: Path, manifest: RunManifest, summary: Summary
) -> dict[tuple[str, str], Tally]:
    """(model, bank) -> every answer's tally: scored ones and those of items without gold.

    The summary counts scored answers only; the records of the others are read again only
    when the run has such items.
    """
    if not any(task in BANKS for task in manifest.no_gold):
        return {k: v for k, v in summary.tallies.items() if k[1] in BANKS}
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    for record in iter_jsonl(folder / "scores.jsonl", skip_unreadable=True):
        if record.get("task") in BANKS:
            tallies[record["model"], record["task"]].add(0.0, bool(record.get("invalid")))
    return tallies


def invalid_lines(folder: Path, manifest: RunManifest, summary: Summary) -> list[str]:
    """Invalid-answer rate per model and bank, items without gold included."""
    banks = [b for b in BANKS if b in manifest.tasks]
    if not banks:
        return []
    tallies = _answered(folder, manifest, summary)
    rows = [
        [
            model,
            *(
                f"{t.invalid_rate:.3f}" if (t := tallies.get((model, bank))) and t.n else "—"
                for bank in banks
            ),
        ]
        for model in manifest.models
    ]
    no_gold = [f"{b} {manifest.no_gold[b]}" for b in banks if manifest.no_gold.get(b)]
    note = "Share of answers that could not be read, per bank, counting every answer"
    note += f" (items without a gold answer included: {', '.join(no_gold)})." if no_gold else "."
    return ["## CPG-EVAL invalid answers", "", note, "", *markdown_table(["model", *banks], rows)]


def _files_lines(dataset: dict[str, Any]) -> list[str]:
    rows = []
    for entry in dataset.get("files") or []:
        golds = entry.get("golds", {})
        rows.append(
            [
                f"`{entry['file']}`",
                entry["kind"],
                entry["rows"],
                ", ".join(f"{b} {n}" for b, n in entry["banks"].items()) or "—",
                entry["in_bank_files"],
                entry["repeats"],
                golds.get("bank", 0),
                golds.get("derived", 0),
                golds.get("none", 0),
            ]
        )
    header = ["file", "kind", "rows", "asked", "also in a bank file", "repeats"]
    header += ["gold from the bank", "gold derived", "no gold"]
    lines = ["## CPG-EVAL files read", "", *markdown_table(header, rows)]
    if dataset.get("answers"):
        lines += [
            "",
            "The gold columns count what the files give and the release determines; the answer "
            f"file then gave {dataset['answers']['items']} items theirs.",
        ]
    if dataset.get("skipped"):
        skipped = ", ".join(f"`{name}`" for name in dataset["skipped"])
        lines += ["", f"Not read (no bank in the name, no QuestionBank column): {skipped}."]
    return lines


def _golds_lines(golds: dict[str, dict[str, Any]]) -> list[str]:
    rows = [
        [bank, g["rule"], g["derived"], g["ambiguous"], g["missing"]] for bank, g in golds.items()
    ]
    return [
        "",
        "Golds the release determines (an item left ambiguous or missing has none, and is asked "
        "but not scored; `--answers` gives any):",
        "",
        *markdown_table(["bank", "derived as", "derived", "ambiguous", "missing"], rows),
    ]


def cpg_lines(folder: Path, manifest: RunManifest, summary: Summary) -> list[str]:
    """The recipe's sections: files read and golds derived (released files), invalid rates."""
    dataset = manifest.dataset or {}
    lines: list[str] = []
    if dataset.get("format") == "cpg-eval" and isinstance(dataset.get("files"), list):
        lines += [
            *_files_lines(dataset),
            *(_golds_lines(dataset["golds"]) if dataset.get("golds") else []),
            "",
        ]
    invalid = invalid_lines(folder, manifest, summary)
    return [*lines, *invalid, ""] if invalid else lines
