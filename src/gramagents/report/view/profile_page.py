"""The overview of a profile: competences with intervals, a radar per model, weakest points.

Example items of a weak point link to the item itself in the viewer of the eval that asked
it (`evals/ENTRY/report.html#item=ID`).
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from ...records import RunManifest
from ..charts import Figure
from .markup import Figures, card, facts, markdown

RADAR_NOTE = (
    "Chance-corrected score per competence (0: chance, 1: every item right; a score below 0 "
    "is drawn at 0). The tables below give each with its 95 % interval."
)


def profile_overview(folder: Path, manifest: RunManifest, figures: Figures) -> str:
    """The profile page's overview, from the folder's `profile.json`."""
    from ..profile import competence_lines, paired_lines, read_profile

    data = read_profile(folder)
    head = facts(
        [
            ("status", manifest.status),
            ("reason", manifest.reason),
            ("models", ", ".join(manifest.models)),
            ("started", manifest.started),
            ("finished", manifest.finished),
        ]
    )
    if data is None:
        return head + card("Profile", "<p>No statistics yet: the profile has not finished.</p>")
    parts = [head, _radar(data, figures)]
    parts.append(card("Competences", markdown(competence_lines(data)[1:])))
    parts.append(card("Weakest grammar points", _weakest(data)))
    if data["paired"]:
        parts.append(card("Paired comparison", markdown(paired_lines(data["paired"])[2:])))
    return "".join(parts)


def _radar(data: dict[str, Any], figures: Figures) -> str:
    """A radar per model (three competences or more), else bars with their intervals."""
    from .plots import radar_chart

    axes = list(data["suite"]["competences"])
    values = {
        model: {
            c: max(0.0, min(1.0, b["corrected"]["value"])) if b is not None else None
            for c, b in blocks.items()
        }
        for model, blocks in data["competences"].items()
    }
    if not values:
        return ""
    if len(axes) >= 3:
        figure = Figure("Competences", radar_chart(values, axes), RADAR_NOTE)
    else:
        figure = Figure("Competences", _bars(data), BARS_NOTE)
    return card("Competence profile", figures.html(figure))


BARS_NOTE = "Chance-corrected score per competence and model, with its 95 % interval."


def _bars(data: dict[str, Any]) -> Any:
    import altair as alt

    rows = [
        {
            "model": model,
            "competence": c,
            "value": b["corrected"]["value"],
            "low": b["corrected"]["low"],
            "high": b["corrected"]["high"],
        }
        for model, blocks in data["competences"].items()
        for c, b in blocks.items()
        if b is not None
    ]
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("competence:N", title=None), yOffset="model:N", color="model:N"
    )
    bars = base.mark_bar().encode(
        x=alt.X("value:Q", title="chance-corrected", scale=alt.Scale(domain=[-1, 1]))
    )
    whiskers = base.mark_rule(color="#3e4c59").encode(x="low:Q", x2="high:Q")
    return alt.layer(bars, whiskers).properties(width=360)


def _weakest(data: dict[str, Any]) -> str:
    parts = []
    for model, points in data["weakest"].items():
        rows = "".join(
            f'<tr><td>{escape(p["point"])}</td><td class="num">{p["n"]}</td>'
            f'<td class="num">{p["corrected"]:.3f}</td><td>{escape(", ".join(p["tasks"]))}</td>'
            f"<td>{_examples(p['examples'])}</td></tr>"
            for p in points
        )
        parts.append(
            f'<h3>{escape(model)}</h3><div class="table-wrap"><table class="md"><thead><tr>'
            "<th>point</th><th>items</th><th>chance-corrected</th><th>tasks</th>"
            f"<th>examples: the model's answer (gold)</th></tr></thead><tbody>{rows}</tbody>"
            "</table></div>"
        )
    return "".join(parts) or "<p>No item carries a grammar-point id.</p>"


def _examples(examples: list[dict[str, Any]]) -> str:
    from ..profile import example_address

    return "<br>".join(
        f'<a href="{escape(example_address(e))}">'
        f"{escape(e['entry'])}/{escape(e['item_id'])}</a> {_reply(e)} "
        f"({escape(_text(e['gold']))})"
        for e in examples
    )


def _reply(example: dict[str, Any]) -> str:
    """The model's answer, or that its reply could not be read (and why)."""
    if example.get("invalid"):
        reason = example.get("reason")
        return "<em>invalid reply</em>" + (f" ({escape(reason)})" if reason else "")
    return escape(_text(example["answer"]))


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:60]
