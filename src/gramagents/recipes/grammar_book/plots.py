"""The paper's figures as Vega-Lite charts (altair), and their offline rendering to SVG.

The chart functions return altair charts, so a page (the run viewer) can embed them as they
are; `save_svg` renders one with vl-convert, which needs neither a browser nor a network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...api import write_atomic


def degradation_chart(rows: list[dict[str, Any]]) -> Any:
    """Figure 4: accuracy (mean ± std over seeds) against the number of options, per task.

    `rows`: one per (task, model, n) with `mean` and `std`.
    """
    import altair as alt

    values = [
        {**r, "low": max(0.0, r["mean"] - r["std"]), "high": min(1.0, r["mean"] + r["std"])}
        for r in rows
    ]
    base = alt.Chart().encode(
        x=alt.X("n:Q", title="number of options", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("model:N", title="model"),
    )
    line = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])),
        tooltip=["task:N", "model:N", "n:Q", alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("std:Q", format=".3f")],
    )  # fmt: skip
    bars = base.mark_errorbar(ticks=True).encode(y=alt.Y("low:Q", title="accuracy"), y2="high:Q")
    return (
        alt.layer(line, bars, data=alt.Data(values=values))
        .properties(width=220, height=180)
        .facet(column=alt.Column("task:N", title=None))
        .properties(title="Accuracy as the number of options grows (mean ± std over seeds)")
    )


def _heatmap(cells: list[dict[str, Any]], method: str, order: list[str]) -> Any:
    import altair as alt

    base = alt.Chart(alt.Data(values=[c for c in cells if c["method"] == method])).encode(
        x=alt.X("column:N", sort=order, title=None),
        y=alt.Y("row:N", sort=order, title=None),
    )
    heat = base.mark_rect().encode(
        color=alt.Color(
            "r:Q",
            title=method,
            scale=alt.Scale(scheme="redblue", domain=[-1, 1], domainMid=0),
        )
    )
    text = base.mark_text(fontSize=11).encode(text=alt.Text("r:Q", format=".2f"))
    return (heat + text).properties(width=28 * len(order), height=28 * len(order), title=method)


def correlation_chart(cells: list[dict[str, Any]], order: list[str]) -> Any:
    """Figure 2: Pearson (top) and Spearman (bottom) correlations, annotated, centred at 0.

    Among the task accuracies and the translation metrics. `cells`: one per (method, row,
    column) with `r` (None where undefined).
    """
    import altair as alt

    return alt.vconcat(
        _heatmap(cells, "Pearson", order), _heatmap(cells, "Spearman", order)
    ).resolve_scale(color="independent")


def save_svg(chart: Any, path: Path) -> Path:
    """Render a chart to an SVG file (offline)."""
    import vl_convert

    write_atomic(path, vl_convert.vegalite_to_svg(chart.to_dict()))
    return path
