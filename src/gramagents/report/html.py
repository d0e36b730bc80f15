"""`report.html`: the report's scores as one bar chart per task (inline SVG, no dependencies)."""

from __future__ import annotations

from html import escape

from ..records import RunManifest
from .summary import Summary

_BAR_WIDTH = 360
_ROW = 22
_LABEL = 190


def _chart(task: str, rows: list[tuple[str, float | None, float | None]]) -> str:
    height = _ROW * len(rows) + 10
    # scores are shares (0-1) for most tasks; metrics on a 0-100 scale (chrF++, BLEU) fill the bar
    scale = 100.0 if any(score is not None and score > 1 for _, score, _ in rows) else 1.0
    parts = [
        f'<svg width="{_LABEL + _BAR_WIDTH + 150}" height="{height}" role="img" '
        f'aria-label="{escape(task)} scores">'
    ]
    for index, (name, score, invalid) in enumerate(rows):
        y = 5 + index * _ROW
        colour = "#9aa5b1" if name == "RANDOM" else "#3b6ea5"
        parts.append(f'<text x="{_LABEL - 8}" y="{y + 15}" text-anchor="end">{escape(name)}</text>')
        if score is not None:
            width = max(1, round(score / scale * _BAR_WIDTH))
            parts.append(
                f'<rect x="{_LABEL}" y="{y + 3}" width="{width}" height="{_ROW - 6}" '
                f'fill="{colour}"><title>{escape(name)}: {score:.3f}</title></rect>'
            )
            note = f"{score:.3f}" + (f" · invalid {invalid:.2f}" if invalid else "")
            parts.append(f'<text x="{_LABEL + width + 6}" y="{y + 15}">{note}</text>')
        else:
            parts.append(f'<text x="{_LABEL + 6}" y="{y + 15}">no score</text>')
    parts.append(f'<line x1="{_LABEL}" y1="0" x2="{_LABEL}" y2="{height}" stroke="#333"/>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(
    manifest: RunManifest, summary: Summary, tasks: list[str], random: dict[str, float]
) -> str:
    """A self-contained HTML page with a bar chart per task."""
    sections = []
    for task in tasks:
        rows: list[tuple[str, float | None, float | None]] = []
        if task in random:
            rows.append(("RANDOM", random[task], None))
        for model in manifest.models:
            tally = summary.tallies.get((model, task))
            rows.append(
                (model, summary.headline(model, task), tally.invalid_rate if tally else None)
            )
        metric = summary.metrics.get(task, "acc")
        sections.append(
            f"<section><h2>{escape(task)} <small>({escape(metric)})</small></h2>"
            f"{_chart(task, rows)}</section>"
        )
    counts = manifest.counts
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{escape(manifest.run_id)}</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2rem;color:#222}"
        "svg text{font-size:13px}small{color:#666;font-weight:normal}"
        "</style></head><body>"
        f"<h1>Evaluation report: {escape(manifest.run_id)}</h1>"
        f"<p>{escape(', '.join(manifest.models))} · {counts.items} answers · "
        f"{counts.invalid} invalid · {counts.failed} failed · status {escape(manifest.status)}."
        " Bars show each task's headline score; RANDOM is a uniform guess. The tables are in "
        "<code>report.md</code>.</p>" + "".join(sections) + "</body></html>\n"
    )
