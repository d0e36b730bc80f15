"""`gramagents agree`: judge-human agreement of a run, written as JSON, markdown and an SVG plot.

Writes `agreement.json` (the whole report), `agreement.md` (tables) and `agreement.svg` (judge
score against the human mean per item) into the run folder, each atomically. The folder is held
as every command holds one (runtime/run.py): locked meanwhile, and refused when it holds a link.
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any

from ..runtime.run import Run
from .agreement import (
    STATISTICS,
    AgreementSettings,
    agreement_report,
    judge_scores,
    read_human_scores,
)

FILES = ("agreement.json", "agreement.md", "agreement.svg")
LABELS = {
    "pearson": "Pearson r",
    "spearman": "Spearman rho",
    "kendall": "Kendall tau-b",
    "qwk": "quadratic-weighted kappa",
    "alpha": "Krippendorff's alpha (interval)",
    "exact": "exact agreement",
    "within": "within ±{k}",
}


def agree_run(
    run_dir: str | Path,
    human_path: str | Path,
    *,
    model: str | None = None,
    settings: AgreementSettings | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """Compare a run's judge scores with human scores and write the agreement files.

    Args:
        run_dir: An eval run folder whose `scores.jsonl` has judged items.
        human_path: CSV of human scores (`item_id,rater,score`).
        model: The model whose judged answers to use, when the run has several.
        settings: Threshold, within-k and bootstrap (default: `AgreementSettings()`).

    Returns:
        The report (see `agreement_report`, plus `run`, `model`, `rubrics`, `human_file`) and
        the paths written.

    Raises:
        GramagentsError: A bad run folder (not an eval run, held by another command, holding
            a link), human file or model choice, or too few common items.
    """
    run = Path(run_dir)
    humans = read_human_scores(human_path)
    with Run.existing(run, kind="eval") as held:
        judged = judge_scores(run, model)
        report = {
            "run": str(run),
            "model": judged.model,
            "rubrics": judged.rubrics,
            "human_file": str(human_path),
            **agreement_report(judged.scores, humans, judged.lengths, settings),
        }
        texts = [
            json.dumps(report, ensure_ascii=False, indent=2) + "\n",
            render_markdown(report),
            render_svg(report),
        ]
        for name, text in zip(FILES, texts, strict=True):
            held.write_text(name, text)
    return report, [run / name for name in FILES]


# --- text -------------------------------------------------------------------------------------


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _cell(entry: dict[str, Any] | None) -> str:
    if entry is None:
        return "–"
    low, high = entry["ci"]
    interval = "" if low is None or high is None else f" [{_f(low)}, {_f(high)}]"
    return _f(entry["value"]) + interval


def _label(name: str, report: dict[str, Any]) -> str:
    return LABELS[name].format(k=f"{report['settings']['within']:g}")


def summary_lines(report: dict[str, Any]) -> list[str]:
    """The key figures as plain lines, for the terminal."""
    lines = []
    if report.get("model"):
        lines.append(f"model: {report['model']}")
    if report.get("rubrics"):
        lines.append(
            "rubric: " + ", ".join(f"{r} ({h[:12]})" for r, h in report["rubrics"].items())
        )
    lines.append(
        f"items: {report['n_items']} (raters: {report['n_raters']}, "
        f"ratings: {report['n_ratings']}; judged without human scores: {report['judge_only']}, "
        f"rated without judge scores: {report['human_only']})"
    )
    ceiling = report["human_ceiling"]
    for name in STATISTICS:
        line = f"{_label(name, report)}: {_cell(report['judge_vs_human_mean'][name])}"
        line += f"; vs single raters {_f(report['judge_vs_raters'][name]['value'])}"
        if ceiling is not None:
            line += f"; human ceiling {_cell(ceiling[name])}"
        lines.append(line)
    if report["alpha_all_humans"] is not None:
        lines.append(f"Krippendorff's alpha, all human raters: {_cell(report['alpha_all_humans'])}")
    bias = report["length_bias"]
    if bias is not None:
        lines.append(
            f"length bias: Pearson(judge score, answer length) {_f(bias['judge_pearson'])} "
            f"over {bias['n']} items; human mean {_f(bias['human_pearson'])}"
        )
    if report["warning"]:
        lines.append(f"warning: {report['warning']}")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """`agreement.md`: the statistics as a table, with intervals, ceiling and length bias."""
    out = ["# Judge-human agreement", "", *_about(report), *_table(report), *_notes(report)]
    return "\n".join(out)


def _about(report: dict[str, Any]) -> list[str]:
    """What was compared, how many items and ratings, and the warning."""
    about = []
    if report.get("run"):
        about.append(f"run `{report['run']}`")
    if report.get("model"):
        about.append(f"model `{report['model']}`")
    if report.get("rubrics"):
        about.append(
            "rubric " + ", ".join(f"`{r}` ({h[:12]})" for r, h in report["rubrics"].items())
        )
    if report.get("human_file"):
        about.append(f"human scores `{report['human_file']}`")
    out = ["; ".join(about) + ".", ""] if about else []
    out += [
        f"{report['n_items']} items have judge and human scores ({report['n_raters']} raters, "
        f"{report['n_ratings']} ratings); {report['judge_only']} judged items have no human "
        f"score and {report['human_only']} rated items no judge score.",
        "",
    ]
    if report["warning"]:
        out += [f"> **Warning:** {report['warning']}.", ""]
    return out


def _table(report: dict[str, Any]) -> list[str]:
    """Each statistic: judge vs human mean, vs single raters, and the human ceiling."""
    out = [
        "| statistic | judge vs human mean | judge vs single rater (mean over raters) "
        f"| human vs human (ceiling, mean over {report['rater_pairs']} pairs) |",
        "| --- | --- | --- | --- |",
    ]
    ceiling = report["human_ceiling"] or {}
    for name in STATISTICS:
        out.append(
            f"| {_label(name, report)} | {_cell(report['judge_vs_human_mean'][name])} "
            f"| {_cell(report['judge_vs_raters'][name])} | {_cell(ceiling.get(name))} |"
        )
    out.append("")
    return out


def _notes(report: dict[str, Any]) -> list[str]:
    """Alpha over all raters, length bias, how the intervals were made, and the plot."""
    out = []
    if report["alpha_all_humans"] is not None:
        out += [
            f"Krippendorff's alpha over all human raters at once: "
            f"{_cell(report['alpha_all_humans'])}.",
            "",
        ]
    bias = report["length_bias"]
    if bias is not None:
        out += [
            f"Length bias: Pearson correlation of the judge's score with answer length "
            f"{_f(bias['judge_pearson'])} over {bias['n']} judged items; of the human mean "
            f"score {_f(bias['human_pearson'])}.",
            "",
        ]
    settings = report["settings"]
    out += [
        f"Intervals: 95% percentile bootstrap over items ({settings['n_boot']} resamples, "
        f"seed {settings['seed']}). Kappa, exact and within-k agreement use scores rounded to "
        f"integers. Warning threshold: Pearson {settings['threshold']:g} against the human mean.",
        "",
        "![judge score against human mean score](agreement.svg)",
        "",
    ]
    return out


# --- plot -------------------------------------------------------------------------------------

_SIZE, _MARGIN = 420, 56


def _axis(low: float, high: float) -> tuple[float, float, list[float]]:
    """Round bounds and 3 to 6 ticks covering [low, high]."""
    span = high - low if high > low else 1.0
    step = 10 ** math.floor(math.log10(span / 5))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 5:
            step *= factor
            break
    first, last = math.floor(low / step) * step, math.ceil(high / step) * step
    if last <= first:
        last = first + step
    count = round((last - first) / step)
    return first, last, [first + i * step for i in range(count + 1)]


def render_svg(report: dict[str, Any]) -> str:
    """`agreement.svg`: each item's judge score (y) against its human mean score (x).

    A self-contained SVG with the diagonal y = x; hovering a point shows its item id.
    """
    points = [p for p in report["points"] if p["judge"] is not None and p["human_mean"] is not None]
    values = [p["judge"] for p in points] + [p["human_mean"] for p in points] or [0.0, 1.0]
    low, high, ticks = _axis(min(values), max(values))
    inner = _SIZE - 2 * _MARGIN

    def x(v: float) -> float:
        return _MARGIN + (v - low) / (high - low) * inner

    def y(v: float) -> float:
        return _SIZE - _MARGIN - (v - low) / (high - low) * inner

    r = report["judge_vs_human_mean"]["pearson"]["value"]
    title = f"judge vs human mean (n = {len(points)}, Pearson r = {_f(r)})"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_SIZE}" height="{_SIZE}" '
        f'viewBox="0 0 {_SIZE} {_SIZE}" font-family="sans-serif" font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{_SIZE}" height="{_SIZE}" fill="white"/>',
        f'<text x="{_SIZE / 2}" y="22" text-anchor="middle" font-size="13">{escape(title)}</text>',
        f'<line x1="{x(low):.1f}" y1="{y(low):.1f}" x2="{x(high):.1f}" y2="{y(high):.1f}" '
        'stroke="#999" stroke-dasharray="4 3"/>',
        f'<rect x="{_MARGIN}" y="{_MARGIN}" width="{inner}" height="{inner}" fill="none" '
        'stroke="#333"/>',
    ]
    for t in ticks:
        parts.append(
            f'<text x="{x(t):.1f}" y="{_SIZE - _MARGIN + 16}" text-anchor="middle">{t:g}</text>'
        )
        parts.append(f'<text x="{_MARGIN - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    parts.append(
        f'<text x="{_SIZE / 2}" y="{_SIZE - 14}" text-anchor="middle">human mean score</text>'
    )
    parts.append(
        f'<text x="16" y="{_SIZE / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {_SIZE / 2})">judge score</text>'
    )
    for p in points:
        label = escape(f"{p['item_id']}: judge {p['judge']:g}, human {p['human_mean']:g}")
        parts.append(
            f'<circle cx="{x(p["human_mean"]):.1f}" cy="{y(p["judge"]):.1f}" r="3.5" '
            f'fill="#1f77b4" fill-opacity="0.6"><title>{label}</title></circle>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
