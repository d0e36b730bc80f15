"""The viewer's charts, made with altair (Vega-Lite), and the script that draws them offline.

The page draws every chart from its Vega-Lite specification with vega-embed. The scripts of
Vega, Vega-Lite and vega-embed come from `vl-convert-python`, which bundles them into one
file with no further dependencies; the page loads that file from beside it, so nothing is
fetched from a network when the page is viewed.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...runtime.paths import home
from ..charts import Figure

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
PALETTE = ["#2f6db5", "#e07b39", "#3a9d6b", "#b5475b", "#7a5fb0", "#8c6d46", "#d16fae", "#6b7785"]
RANDOM_COLOUR = "#1f2933"
MAX_HEATMAP_COLUMNS = 400
"""A breakdown with more values than this is left to the tables (a heatmap too wide to read)."""


def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed in one script (made once per vl-convert version)."""
    import altair as alt
    import vl_convert as vlc

    version = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    stamp = re.sub(r"[^0-9A-Za-z.]+", "-", f"{vlc.__version__}-vl{version}")
    cached = home() / "view" / f"vega-{stamp}.js"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    bundle = vlc.javascript_bundle(vl_version=version)
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(".tmp")
    partial.write_text(bundle, encoding="utf-8")
    partial.replace(cached)
    return bundle


def _config(chart: Any) -> Any:
    return (
        chart.configure(font=FONT, background="white")
        .configure_view(stroke=None)
        .configure_axis(
            labelColor="#3e4c59",
            titleColor="#3e4c59",
            gridColor="#e4e7eb",
            domainColor="#9aa5b1",
            labelFontSize=12,
            titleFontSize=12,
        )
        .configure_legend(labelFontSize=12, titleFontSize=12, orient="top")
        .configure_header(labelFontSize=12, titleFontSize=12)
        .configure_range(category=PALETTE)
    )


@dataclass
class Bar:
    """One bar: a model's score on a task, over one run or several seeds."""

    task: str
    model: str
    metric: str
    values: list[float] = field(default_factory=list)
    invalid_rate: float | None = None
    n: int = 0


def _bar_row(bar: Bar) -> dict[str, Any]:
    mean = statistics.fmean(bar.values)
    sd = statistics.stdev(bar.values) if len(bar.values) > 1 else None
    return {
        "task": bar.task,
        "model": bar.model,
        "score": mean,
        "sd": sd,
        "lo": None if sd is None else mean - sd,
        "hi": None if sd is None else mean + sd,
        "seeds": len(bar.values),
        "invalid": bar.invalid_rate,
        "n": bar.n,
    }


def task_bars(bars: list[Bar], random: dict[str, float], tasks: list[str]) -> list[Figure]:
    """Per-task bars, one chart per headline metric; error bars (±1 sd) where there are seeds."""
    import altair as alt

    figures = []
    metrics = list(dict.fromkeys(b.metric for b in bars))
    for metric in metrics:
        group = [b for b in bars if b.metric == metric and b.values]
        if not group:
            continue
        order = [t for t in tasks if any(b.task == t for b in group)]
        models = list(dict.fromkeys(b.model for b in group))
        rows = [_bar_row(b) for b in group]
        x = alt.X("task:N", sort=order, title=None, axis=alt.Axis(labelAngle=-30))
        offset = alt.XOffset("model:N", sort=models)
        colour = alt.Color("model:N", sort=models, title="model")
        tooltip = [
            "model:N",
            "task:N",
            alt.Tooltip("score:Q", format=".3f", title=metric),
            alt.Tooltip("sd:Q", format=".3f", title="sd over seeds"),
            "seeds:Q",
            alt.Tooltip("invalid:Q", format=".1%", title="invalid"),
            "n:Q",
        ]
        base = alt.Chart(alt.Data(values=rows))
        layers = [
            base.mark_bar(cornerRadiusTopLeft=2, cornerRadiusTopRight=2).encode(
                x=x, xOffset=offset, color=colour, y=alt.Y("score:Q", title=metric), tooltip=tooltip
            )
        ]
        if any(r["sd"] is not None for r in rows):
            layers.append(
                base.transform_filter("datum.sd != null")
                .mark_errorbar(ticks=True, color=RANDOM_COLOUR)
                .encode(x=x, xOffset=offset, y=alt.Y("lo:Q", title=metric), y2="hi:Q")
            )
        chance = [{"task": t, "random": random[t]} for t in order if t in random]
        if chance:
            layers.append(
                alt.Chart(alt.Data(values=chance))
                .mark_tick(color=RANDOM_COLOUR, thickness=2, strokeDash=[4, 3])
                .encode(
                    x=x,
                    y="random:Q",
                    tooltip=["task:N", alt.Tooltip("random:Q", format=".3f", title="RANDOM")],
                )
            )
        width = len(order) * max(40, 20 * len(models))
        chart = alt.layer(*layers).properties(width=max(240, width), height=260)
        seeds = any(r["seeds"] > 1 for r in rows)
        caption = f"Headline score ({metric}) per task and model."
        if chance:
            caption += " The dashed tick is the RANDOM baseline."
        if seeds:
            caption += " Bars are means over seeds; whiskers ±1 standard deviation."
        figures.append(Figure(f"Scores by task ({metric})", _config(chart), caption))
    return figures


def _natural(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        return (1, value)


def heatmap(key: str, rows: list[dict[str, Any]], metric: str) -> Figure | None:
    """Models (and tasks) × the values of one breakdown key, coloured by score."""
    import altair as alt

    values = sorted({r["value"] for r in rows}, key=_natural)
    if len(values) < 2 or len(values) > MAX_HEATMAP_COLUMNS:
        return None
    series = list(dict.fromkeys(r["series"] for r in rows))
    unit = all(0.0 <= r["score"] <= 1.0 for r in rows if r["score"] is not None)
    scale = alt.Scale(scheme="blues", domain=[0, 1]) if unit else alt.Scale(scheme="blues")
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X(
                "value:N", sort=values, title=key, axis=alt.Axis(labelAngle=-45, labelLimit=120)
            ),
            y=alt.Y("series:N", sort=series, title=None, axis=alt.Axis(labelLimit=260)),
            color=alt.Color("score:Q", scale=scale, title=metric),
            tooltip=[
                "series:N",
                alt.Tooltip("value:N", title=key),
                alt.Tooltip("score:Q", format=".3f", title=metric),
                alt.Tooltip("invalid:Q", format=".1%", title="invalid"),
                "n:Q",
            ],
        )
        .properties(width={"step": 22 if len(values) < 40 else 14}, height={"step": 22})
    )
    return Figure(
        f"Scores by {key} ({metric})",
        _config(chart),
        f"Each cell is the mean {metric} of the items with that {key}; hover for counts.",
    )


def agreement_scatter(report: dict[str, Any]) -> Figure | None:
    """Each judged item's judge score against its human mean, with the diagonal."""
    import altair as alt

    points = [
        p
        for p in report.get("points", [])
        if p.get("judge") is not None and p.get("human_mean") is not None
    ]
    if not points:
        return None
    values = [p["judge"] for p in points] + [p["human_mean"] for p in points]
    low, high = min(values), max(values)
    same = alt.Scale(domain=[low, high], nice=True, zero=False)  # one scale: the diagonal is y = x
    diagonal = (
        alt.Chart(alt.Data(values=[{"v": low}, {"v": high}]))
        .mark_line(color="#9aa5b1", strokeDash=[4, 3])
        .encode(x="v:Q", y="v:Q")
    )
    dots = (
        alt.Chart(alt.Data(values=points))
        .mark_circle(size=60, opacity=0.65, color=PALETTE[0])
        .encode(
            x=alt.X("human_mean:Q", title="human mean score", scale=same),
            y=alt.Y("judge:Q", title="judge score", scale=same),
            tooltip=["item_id:N", "judge:Q", alt.Tooltip("human_mean:Q", format=".2f")],
        )
    )
    pearson = (report.get("judge_vs_human_mean") or {}).get("pearson", {}).get("value")
    title = f"Judge against humans (n = {len(points)}"
    title += f", Pearson r = {pearson:.3f})" if isinstance(pearson, float) else ")"
    chart = alt.layer(diagonal, dots).properties(width=360, height=360)
    return Figure(title, _config(chart), "Points on the dashed diagonal: judge and humans agree.")


def series_lines(
    rows: list[dict[str, Any]], x_title: str, y_title: str, order: list[str], log_x: bool
) -> Any:
    """Scores of a family of models against a number (a checkpoint's step, a model's size).

    `rows`: {"x", "shown", "point", "oa", "model", "family"}; one line per `point` (in
    `order`), one panel per family when there are several; a log scale for sizes.
    """
    import altair as alt

    scale = alt.Scale(type="log") if log_x else alt.Scale(zero=False)
    chart = (
        alt.Chart(alt.Data(values=rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=scale),
            y=alt.Y("oa:Q", title=y_title),
            color=alt.Color("point:N", sort=order, title=None),
            tooltip=[
                "model:N",
                "point:N",
                alt.Tooltip("shown:N", title=x_title),
                alt.Tooltip("oa:Q", format=".2f", title=y_title),
            ],
        )
        .properties(width=360, height=260)
    )
    if len({r["family"] for r in rows}) > 1:
        chart = chart.facet(column=alt.Column("family:N", title=None))
    return _config(chart)


GOOD = ("accepted", "kept", "rewritten", "generated", "items", "parsed", "written", "points")
WARN = ("flagged", "review", "edited")
BAD = ("rejected", "removed", "failed", "refused", "dropped", "duplicates", "invalid")
TOTALS = ("planned", "read")
"""Count names a stage chart colours as kept (blues), flagged (amber), lost (reds); totals are
drawn as a tick, not a segment."""


RANKS = {"kept": 0, "other": 1, "flagged": 2, "lost": 3}


def _shade(name: str) -> str:
    lowered = name.lower()
    if any(w in lowered for w in BAD):
        return "lost"
    if any(w in lowered for w in WARN):
        return "flagged"
    return "kept" if any(w in lowered for w in GOOD) else "other"


def stage_chart(stages: dict[str, dict[str, int]]) -> Figure | None:
    """Each build stage as one stacked bar of its outcomes, its planned total as a tick."""
    import altair as alt

    rows, totals = [], []
    for stage, counts in stages.items():
        for name, value in counts.items():
            if not isinstance(value, int | float) or not math.isfinite(value):
                continue
            if name in TOTALS:
                totals.append({"stage": stage, "count": name, "value": value})
            else:
                shade = _shade(name)
                rows.append({"stage": stage, "count": name, "value": value, "rank": RANKS[shade]})
    if not rows:
        return None
    order = list(stages)
    names = list(dict.fromkeys(r["count"] for r in rows))
    shades = {
        "kept": ["#2f6db5", "#5b8fd1", "#8fb4e3", "#3a9d6b"],
        "flagged": ["#e0a030"],
        "lost": ["#b5475b", "#d9798a", "#8c2f40"],
        "other": ["#8d99a6", "#b8c2cc"],
    }
    used: dict[str, int] = {}
    colours = []
    for name in names:
        palette = shades[_shade(name)]
        colours.append(palette[used.get(_shade(name), 0) % len(palette)])
        used[_shade(name)] = used.get(_shade(name), 0) + 1
    y = alt.Y("stage:N", sort=order, title=None)
    bars = (
        alt.Chart(alt.Data(values=rows))
        .mark_bar()
        .encode(
            y=y,
            x=alt.X("value:Q", title="records", stack="zero"),
            color=alt.Color(
                "count:N", sort=names, scale=alt.Scale(domain=names, range=colours), title=None
            ),
            order=alt.Order("rank:Q"),
            tooltip=["stage:N", "count:N", "value:Q"],
        )
    )
    layers = [bars]
    if totals:
        layers.append(
            alt.Chart(alt.Data(values=totals))
            .mark_tick(color=RANDOM_COLOUR, thickness=2)
            .encode(y=y, x="value:Q", tooltip=["stage:N", "count:N", "value:Q"])
        )
    chart = alt.layer(*layers).properties(width=560, height={"step": 26})
    return Figure(
        "Stage counts",
        _config(chart),
        "Each stage's outcomes stacked (kept in blue, flagged in amber, lost in red); the dark "
        "tick is what the stage planned or read.",
    )


def write_bundle(folder: Path) -> int:
    """Write the charting script as `vega.js` in `folder`; its size in bytes."""
    data = vega_bundle().encode("utf-8")
    (folder / "vega.js").write_bytes(data)
    return len(data)


RADAR_RINGS = (0.25, 0.5, 0.75, 1.0)
RADAR_COLUMNS = 4
RING_COLOUR = "#c0392b"


def _polar(value: float, index: int, count: int) -> tuple[float, float]:
    """A point at `value` along axis `index` of `count` (the first axis points up)."""
    angle = 2 * math.pi * index / count
    return value * math.sin(angle), value * math.cos(angle)


def _radar_rows(
    values: dict[str, dict[str, float | None]], axes: list[str], rings: dict[str, float]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    circle = 72
    for series, scores in values.items():
        for level in RADAR_RINGS:  # the grid: a polygon per level, a spoke per axis
            for i in range(len(axes) + 1):
                x, y = _polar(level, i % len(axes), len(axes))
                rows.append({"series": series, "layer": "grid", "group": f"g{level}",
                             "order": i, "x": x, "y": y})  # fmt: skip
        for i, axis in enumerate(axes):
            for order, r in enumerate((0.0, 1.0)):
                x, y = _polar(r, i, len(axes))
                rows.append({"series": series, "layer": "grid", "group": f"s{i}",
                             "order": order, "x": x, "y": y})  # fmt: skip
            x, y = _polar(1.2, i, len(axes))
            rows.append({"series": series, "layer": "label", "axis": axis, "x": x, "y": y})
        shown = [(i, a, scores.get(a)) for i, a in enumerate(axes)]
        for order, (i, axis, value) in enumerate([*shown, shown[0]]):
            x, y = _polar(value or 0.0, i, len(axes))
            rows.append({"series": series, "layer": "shape", "axis": axis, "order": order,
                         "x": x, "y": y, "value": value})  # fmt: skip
        if series in rings:
            for i in range(circle + 1):
                angle = 2 * math.pi * i / circle
                rows.append({"series": series, "layer": "ring", "order": i, "value": rings[series],
                             "x": rings[series] * math.sin(angle),
                             "y": rings[series] * math.cos(angle)})  # fmt: skip
    return rows


def radar_chart(
    values: dict[str, dict[str, float | None]],
    axes: list[str],
    rings: dict[str, float] | None = None,
    ring_label: str = "",
) -> Any:
    """One radar per series (model): its scores (0-1) on `axes`, and a ring at `rings[series]`.

    The paper's Figure 3 (the grammar-book recipe): task accuracies on the spokes, the
    translation score as a red ring. A missing score is drawn at 0 and shown as such on hover.
    """
    import altair as alt

    rows = _radar_rows(values, axes, rings or {})
    scale = alt.Scale(domain=[-1.35, 1.35])
    x = alt.X("x:Q", scale=scale, axis=None)
    y = alt.Y("y:Q", scale=scale, axis=None)
    base = alt.Chart().encode(x=x, y=y)
    grid = (
        base.transform_filter("datum.layer == 'grid'")
        .mark_line(color="#cbd2d9", strokeWidth=1)
        .encode(detail="group:N", order="order:Q")
    )
    labels = (
        base.transform_filter("datum.layer == 'label'")
        .mark_text(fontSize=11, color="#3e4c59")
        .encode(text="axis:N")
    )
    shape = (
        base.transform_filter("datum.layer == 'shape'")
        .mark_line(point=True, color=PALETTE[0], strokeWidth=2)
        .encode(
            order="order:Q",
            tooltip=["series:N", "axis:N", alt.Tooltip("value:Q", format=".3f")],
        )
    )
    layers = [grid, labels, shape]
    if rings:
        layers.append(
            base.transform_filter("datum.layer == 'ring'")
            .mark_line(color=RING_COLOUR, strokeDash=[4, 3], strokeWidth=1.5)
            .encode(order="order:Q", tooltip=["series:N", alt.Tooltip("value:Q", format=".3f",
                                                                      title=ring_label)])
        )  # fmt: skip
    chart = (
        alt.layer(*layers, data=alt.Data(values=rows))
        .properties(width=180, height=180)
        .facet(facet=alt.Facet("series:N", title=None), columns=RADAR_COLUMNS)
    )
    return _config(chart)
