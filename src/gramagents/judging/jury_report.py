"""The judges' section of an eval report: who judged, at what cost, how far they agree.

From the run's records (`scores.jsonl`, each judged answer's verdicts per judge) and manifest
(the jury, its counts, its self-judged pairs):

- the jury and its rule, and every model a judge of it graded its own answers of (flagged);
- each judge's cost: requests, cache hits, tokens where the server reported them, and the
  answers it was left out of (no total);
- with two judges or more, their agreement over the answers at least two of them scored:
  Krippendorff's alpha (interval metric, on scores as percent of the scale) with a bootstrap
  95% interval over answers, and each pair's quadratic-weighted kappa with its interval
  (judging/statistics.py); and `jury-review.jsonl`, the answers they disagree on most;
- the `gramagents judge-check` table, when the run has been checked.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..records import EvalManifest
from ..report.markdown import markdown_table
from ..report.mdtext import code_span, md_text
from ..runtime.reconcile import RESPONSES, SCORES
from ..runtime.rundir import iter_jsonl, refuse_link, write_atomic
from .jury import judged_records, recorded_verdicts
from .statistics import (
    krippendorff_alpha,
    percentile_interval,
    quadratic_kappa,
    resample_counts,
    weighted_alpha,
    weighted_kappa,
)

REVIEW_FILE = "jury-review.jsonl"
REVIEWED = 50
"""Answers the review file lists at most, those the judges disagree on most first."""
BOOT, SEED = 1000, 0
ANSWER_CHARS = 4000
"""The most of an answer the review file repeats."""


def judges_section(folder: Path, manifest: EvalManifest) -> list[str]:
    """The markdown of the judges' section (none when the run judged nothing)."""
    block = manifest.judge
    if not block:
        return []
    labels = [str(m) for m in block.get("models") or [block.get("model")]]
    table = _JuryTable.read(folder / SCORES, labels)
    lines = ["## Judges", "", *_about(block, labels), *_cost(block, labels, table)]
    if len(labels) > 1:
        lines += _agreement(table)
        lines += _review(folder, table)
    lines += _checked(folder)
    return lines


def _about(block: dict[str, Any], labels: list[str]) -> list[str]:
    """Who judged, by which rule, and every self-judged pair, flagged."""
    if len(labels) == 1:
        lines = [f"Judged by {md_text(labels[0])}.", ""]
    else:
        lines = [
            f"Judged by a jury of {len(labels)}: {', '.join(map(md_text, labels))}; an answer's "
            f"score is the {md_text(block.get('jury', 'median'))} of their totals (a judge that "
            "gave none is left out of it).",
            "",
        ]
    pairs = block.get("self_judged") or []
    default = (
        ""
        if block.get("named", True)
        else (
            " This is the default judge, named by no one: a smoke test of the workflow, not a "
            "measurement; name another with --judge-model."
        )
    )
    for pair in pairs:
        lines.append(
            f"- **Self-judged:** {md_text(pair['judge'])} grades its own answers "
            f"({md_text(pair['model'])}); judges favour their own outputs, so read that model's "
            f"judged scores as an upper bound.{default}"
        )
    return lines + ([""] if pairs else [])


def _cost(block: dict[str, Any], labels: list[str], table: _JuryTable) -> list[str]:
    per_judge = block.get("judges") or {}
    rows = []
    for label in labels:
        stats = per_judge.get(label, {})
        tokens = (stats.get("prompt_tokens") or 0) + (stats.get("completion_tokens") or 0)
        rows.append(
            [
                label,
                stats.get("requests_sent", "–"),
                stats.get("cache_hits", "–"),
                f"{stats.get('prompt_tokens', 0):,} + {stats.get('completion_tokens', 0):,}"
                if tokens
                else "–",
                table.left_out.get(label, 0),
            ]
        )
    header = ["judge", "requests", "cache hits", "tokens (prompt + completion)", "left out"]
    return [
        *markdown_table(header, rows),
        "",
        "Requests, cache hits and tokens are this invocation's (tokens where the server "
        "reported them); `left out`: judged answers the judge gave no total for.",
        "",
    ]


class _JuryTable:
    """Each judged answer's score per judge, as percent of its scale (NaN: none)."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = labels
        self.keys: list[tuple[str, str, str]] = []
        """(model, item id, task) per answer."""
        self.rows: list[list[float]] = []
        self.reasons: list[dict[str, str]] = []
        self.left_out: dict[str, int] = {}

    @classmethod
    def read(cls, path: Path, labels: list[str]) -> _JuryTable:
        table = cls(labels)
        at = {label: k for k, label in enumerate(labels)}
        for record in judged_records(iter_jsonl(path, skip_unreadable=True)):
            details = record["details"]["judge"]
            row = [math.nan] * len(labels)
            for verdict in recorded_verdicts(details):
                if verdict.judge not in at:
                    continue
                if verdict.share is None:
                    table.left_out[verdict.judge] = table.left_out.get(verdict.judge, 0) + 1
                else:
                    row[at[verdict.judge]] = 100.0 * verdict.share
            entries = details.get("verdicts") or [details]
            table.keys.append((str(record["model"]), str(record["item_id"]), str(record["task"])))
            table.rows.append(row)
            table.reasons.append({str(e.get("judge")): str(e.get("reason", "")) for e in entries})
        return table

    def matrix(self) -> np.ndarray:
        """(judges, answers), NaN where a judge gave no total."""
        return np.array(self.rows, dtype=float).T.reshape(len(self.labels), len(self.rows))


def _cell(value: float, interval: tuple[float, float]) -> str:
    if math.isnan(value):
        return "–"
    low, high = interval
    shown = "" if math.isnan(low) else f" [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}{shown}"


def jury_agreement(matrix: np.ndarray, labels: list[str]) -> dict[str, Any]:
    """Alpha and pairwise kappas of a (judges, answers) table of scores, with intervals."""
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    data = matrix[:, pairable]
    n = data.shape[1]
    counts = resample_counts(n, BOOT, SEED) if n > 1 else np.zeros((0, n))
    alpha = krippendorff_alpha(data) if n else math.nan
    result: dict[str, Any] = {
        "n": n,
        "alpha": alpha,
        "alpha_ci": percentile_interval(weighted_alpha(data, counts)) if n > 1 else (math.nan,) * 2,
        "pairs": [],
    }
    for a, b in itertools.combinations(range(len(labels)), 2):
        x, y = data[a], data[b]
        result["pairs"].append(
            {
                "judges": (labels[a], labels[b]),
                "n": int((~(np.isnan(x) | np.isnan(y))).sum()),
                "qwk": quadratic_kappa(x, y),
                "qwk_ci": percentile_interval(weighted_kappa(x, y, counts))
                if n > 1
                else (math.nan, math.nan),
            }
        )
    return result


def _agreement(table: _JuryTable) -> list[str]:
    found = jury_agreement(table.matrix(), table.labels)
    rows = [[" · ".join(p["judges"]), p["n"], _cell(p["qwk"], p["qwk_ci"])] for p in found["pairs"]]
    return [
        f"Agreement of the judges over {found['n']} answers scored by two or more: "
        f"Krippendorff's alpha (interval) {_cell(found['alpha'], found['alpha_ci'])}.",
        "",
        *markdown_table(["judges", "answers", "quadratic-weighted kappa"], rows),
        "",
        f"Scores as percent of the rubric's scale (kappa on whole percents); 95% intervals: "
        f"percentile bootstrap over answers ({BOOT} resamples, seed {SEED}).",
        "",
    ]


def _review(folder: Path, table: _JuryTable) -> list[str]:
    """Write `jury-review.jsonl`; the line that points to it."""
    spreads = []
    for k, row in enumerate(table.rows):
        given = [v for v in row if not math.isnan(v)]
        if len(given) >= 2 and max(given) > min(given):
            spreads.append((max(given) - min(given), k))
    spreads.sort(key=lambda entry: (-entry[0], table.keys[entry[1]]))
    chosen = spreads[:REVIEWED]
    answers = _answers(folder, {table.keys[k][:2] for _, k in chosen})
    lines = []
    for spread, k in chosen:
        model, item, task = table.keys[k]
        scores = {
            judge: None if math.isnan(value) else round(value, 2)
            for judge, value in zip(table.labels, table.rows[k], strict=True)
        }
        entry = {
            "model": model,
            "item_id": item,
            "task": task,
            "spread": round(spread, 2),
            "scores_pct": scores,
            "reasons": table.reasons[k],
            "answer": answers.get((model, item), "")[:ANSWER_CHARS],
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
    refuse_link(folder / REVIEW_FILE)
    write_atomic(folder / REVIEW_FILE, "".join(f"{line}\n" for line in lines))
    return [
        f"The {len(chosen)} answers the judges disagree on most (the widest spread of their "
        f"scores) are in {code_span(REVIEW_FILE)}, each with every judge's score and reason.",
        "",
    ]


def _answers(folder: Path, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    found = {}
    for record in iter_jsonl(folder / RESPONSES, skip_unreadable=True):
        key = (str(record.get("model")), str(record.get("item_id")))
        if key in wanted:
            found[key] = str(record.get("raw") or "")
    return found


def _checked(folder: Path) -> list[str]:
    """The `judge-check` table, when the run has one."""
    path = folder / "judge-check.json"
    if not path.is_file():
        return []
    from .check_stats import check_table, flag_note

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows, settings = data["rows"], data["settings"]
    except (ValueError, KeyError, TypeError):
        return ["", f"{code_span('judge-check.json')} is unreadable; run judge-check again.", ""]
    flagged = sorted({f"{r['judge']} ({r['probe']})" for r in rows if r.get("flagged")})
    summary = "flagged: " + ", ".join(map(md_text, flagged)) if flagged else "no judge flagged"
    return [
        "### Judge check",
        "",
        f"`gramagents judge-check` probed {data.get('answers', '?')} answers: {summary}.",
        "",
        *check_table(rows),
        "",
        *flag_note(settings),
        "",
    ]
