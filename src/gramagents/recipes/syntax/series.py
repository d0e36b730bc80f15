"""A family of models against a number: the paper's Figures 4 and 7.

Figure 4 follows one model over its training checkpoints (OA per knowledge point against the
training tokens), Figure 7 models of several sizes (against the parameter count). Here the
number comes with each model's spec, as a series option that every backend takes and no
request uses (`models.spec.SERIES_OPTIONS`): `params=7B`, `tokens=220B` or `step=1000`, and
`family=NAME` to name the series (default: the spec without its series options). Evaluate
the family in one run:

    gramagents eval RUN --model "hf:org/model?revision=step1000&step=1000"
                        --model "hf:org/model?revision=step2000&step=2000" ...

and the report shows a table, and the viewer a chart, of OA per knowledge point (and over
all points) against the number, one per setting and per option the models carry.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ...api import (
    SERIES_OPTIONS,
    Figure,
    RunManifest,
    SpecError,
    Summary,
    markdown_table,
    parse_spec,
    series_number,
)
from .points import point_order
from .report import figures, oa_of, pct, point_names, present_settings

AXES = {"params": "parameters", "tokens": "training tokens", "step": "training step"}
ALL = "all points"


@dataclass(frozen=True)
class Member:
    """A model of a series: its label, family, and the number it is plotted at."""

    model: str
    family: str
    axis: str
    value: float
    shown: str
    """The number as the spec writes it (`7B`)."""


def members(manifest: RunManifest) -> dict[str, list[Member]]:
    """Per series option, the run's models that carry it, in order of their number."""
    found: dict[str, list[Member]] = defaultdict(list)
    for model in manifest.models:
        try:
            spec = parse_spec(model)
        except SpecError:
            continue
        rest = "&".join(f"{k}={v}" for k, v in spec.options.items() if k not in SERIES_OPTIONS)
        family = spec.options.get("family") or spec.raw.split("?")[0] + (f"?{rest}" if rest else "")
        for axis in AXES:
            value = series_number(spec, axis)
            if value is not None:
                found[axis].append(Member(model, family, axis, value, spec.options[axis]))
    return {axis: sorted(group, key=lambda m: (m.family, m.value)) for axis, group in found.items()}


def series_rows(manifest: RunManifest, summary: Summary, suffix: str, axis: str) -> list[dict]:
    """One row per (model, point) of a series: family, number, point and OA (in percent)."""
    points = point_names(summary, manifest, suffix)
    rows = []
    for member in members(manifest).get(axis, []):
        for point in [None, *points]:
            oa, _ = oa_of(figures(summary, member.model, suffix, point))
            if oa is not None:
                rows.append(
                    {
                        "model": member.model,
                        "family": member.family,
                        "x": member.value,
                        "shown": member.shown,
                        "point": point or ALL,
                        "oa": 100 * oa,
                    }
                )
    return rows


def series_sections(manifest: RunManifest, summary: Summary) -> list[str]:
    """Tables of OA per knowledge point against each series number the models carry."""
    present = present_settings(manifest, summary)
    found = members(manifest)
    lines: list[str] = []
    for axis, group in found.items():
        for setting, suffix in present:
            rows = series_rows(manifest, summary, suffix, axis)
            points = sorted({r["point"] for r in rows} - {ALL}, key=point_order)
            cells: dict[str, dict[str, float]] = defaultdict(dict)
            for row in rows:
                cells[row["model"]][row["point"]] = row["oa"] / 100
            table = [
                [m.family, m.shown, m.model, *(pct(cells[m.model].get(p)) for p in [ALL, *points])]
                for m in group
            ]
            lines += [
                f"## Syntax-QA series: OA against {AXES[axis]} ({setting})",
                "",
                f"The paper's Figure {4 if axis != 'params' else 7} layout: each model's OA "
                f"over all points and per knowledge point, by family and {AXES[axis]} "
                f"(the spec's `{axis}=` option).",
                "",
                *markdown_table(["family", axis, "model", ALL, *points], table),
                "",
            ]
    return lines


def series_charts(manifest: RunManifest, summary: Summary) -> list[Figure]:
    """The viewer's charts of the same: one line per knowledge point, a panel per family."""
    from ...api import series_lines

    charts = []
    for axis in members(manifest):
        for setting, suffix in present_settings(manifest, summary):
            rows: list[dict[str, Any]] = series_rows(manifest, summary, suffix, axis)
            if len({r["x"] for r in rows}) < 2:
                continue
            order = [ALL, *sorted({r["point"] for r in rows} - {ALL}, key=point_order)]
            figure = series_lines(
                rows, x_title=AXES[axis], y_title="OA (%)", order=order, log_x=axis == "params"
            )
            charts.append(
                Figure(
                    f"Syntax-QA OA against {AXES[axis]} ({setting})",
                    figure,
                    f"The paper's Figure {4 if axis != 'params' else 7}: OA per knowledge point "
                    "(and over all points) of each model of a family, at the number its spec "
                    f"carries (`{axis}=`).",
                )
            )
    return charts
