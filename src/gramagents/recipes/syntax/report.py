"""Report sections of the syntax recipe, laid out as the paper's Tables 2, 7, 8-9 and 10-12.

Scores are in percent. Few-shot figures are the mean over the seeds with the (sample)
standard deviation after ±; OA is computed per seed, then averaged. A knowledge point's OA
needs all three question types; a point some type did not reach (e.g. under `--limit`)
shows —. Correlations between question types are across the run's models (Table 7), so
they need at least three models evaluated together.
"""

from __future__ import annotations

import math
from typing import Any

from ...api import RunManifest, Summary, markdown_table
from .metrics import mean_std, overall
from .points import point_order
from .tasks import FEW_SHOT, TYPE_TASKS

SETTINGS = (("zero-shot", ""), ("few-shot", FEW_SHOT))
COLUMNS = (("TF", "acc"), ("MC", "acc"), ("FITB", "acc"), ("FITB", "f1"))
HEADERS = ("TF Acc.", "MC Acc.", "FITB Acc.", "FITB F1")
Figures = dict[str, dict[tuple[str, str], float]]
"""Seed to (type, metric) to score."""


def pct(mean: float | None, std: float | None = None) -> str:
    """A score in percent (with its standard deviation after ±), — for none."""
    if mean is None:
        return "—"
    return f"{100 * mean:.2f}" + (f" ± {100 * std:.2f}" if std is not None else "")


def figures(summary: Summary, model: str, suffix: str, point: str | None = None) -> Figures:
    """A model's scores per seed (zero-shot: one, seed 0) in one setting, overall or for a point."""
    found: Figures = {}
    for kind, name in COLUMNS:
        aggregate = summary.aggregates.get((model, TYPE_TASKS[kind] + suffix))
        if aggregate is None:
            continue
        tables = aggregate.tables
        per_seed = tables["seeds"] if point is None else tables["point_seeds"].get(point, {})
        for seed, scores in per_seed.items():
            if name in scores:
                found.setdefault(seed, {})[kind, name] = scores[name]
    return found


def oa_of(per_seed: Figures) -> tuple[float | None, float | None]:
    """Mean and standard deviation of OA over the seeds that have all four scores."""
    values = [
        overall(*(scores[c] for c in COLUMNS))
        for scores in per_seed.values()
        if all(c in scores for c in COLUMNS)
    ]
    return mean_std(values)


def _cells(per_seed: Figures) -> list[str]:
    cells = [pct(*mean_std([s[c] for s in per_seed.values() if c in s])) for c in COLUMNS]
    return [*cells, pct(*oa_of(per_seed))]


def present_settings(manifest: RunManifest, summary: Summary) -> list[tuple[str, str]]:
    """The settings (zero-shot, few-shot) some model of the run was evaluated in."""
    return [
        (setting, suffix)
        for setting, suffix in SETTINGS
        if any(
            (m, TYPE_TASKS[k] + suffix) in summary.aggregates
            for m in manifest.models
            for k in TYPE_TASKS
        )
    ]


def _random_row(manifest: RunManifest, summary: Summary, suffix: str) -> list[str]:
    fitb = TYPE_TASKS["FITB"] + suffix
    f1 = next(
        (a.tables.get("random_f1") for (_, t), a in summary.aggregates.items() if t == fitb),
        None,
    )
    random = manifest.random_baselines
    values = {
        ("TF", "acc"): random.get(TYPE_TASKS["TF"] + suffix),
        ("MC", "acc"): random.get(TYPE_TASKS["MC"] + suffix),
        ("FITB", "acc"): random.get(fitb),
        ("FITB", "f1"): f1,
    }
    cells = [pct(values[c]) for c in COLUMNS]
    known = [values[c] for c in COLUMNS]
    oa = overall(*known) if all(v is not None for v in known) else None  # type: ignore[arg-type]
    return ["Random", *cells, pct(oa)]


def syntax_sections(manifest: RunManifest, summary: Summary) -> list[str]:
    """The syntax tables of an eval run; nothing when the run has no syntax task."""
    present = present_settings(manifest, summary)
    if not present:
        return []
    lines: list[str] = []
    for setting, suffix in present:
        lines += _main_table(manifest, summary, setting, suffix)
    for setting, suffix in present:
        lines += _point_table(manifest, summary, setting, suffix)
    for setting, suffix in present:
        lines += _type_point_table(manifest, summary, setting, suffix)
    lines += _correlations(manifest, summary, present)
    return [*lines, ""]


def _main_table(manifest: RunManifest, summary: Summary, setting: str, suffix: str) -> list[str]:
    rows = [_random_row(manifest, summary, suffix)]
    rows += [[m, *_cells(figures(summary, m, suffix))] for m in manifest.models]
    note = "mean ± standard deviation over the seeds. " if suffix else ""
    return [
        f"## Syntax-QA Table 2 layout: {setting}",
        "",
        f"Accuracy and FITB F1 in percent; {note}OA = (TF + MC + (FITB Acc. + FITB F1) / 2) / 3. "
        "Random: 1/2, 1/4, and for a blank a uniformly random span of the sentence (the "
        "paper's random answerer).",
        "",
        *markdown_table(["Model", *HEADERS, "OA"], rows),
        "",
    ]


def point_names(summary: Summary, manifest: RunManifest, suffix: str) -> list[str]:
    """The knowledge points some model of the run was scored on in a setting, in order."""
    seen: set[str] = set()
    for (model, task), aggregate in summary.aggregates.items():
        if model in manifest.models and task in {t + suffix for t in TYPE_TASKS.values()}:
            seen |= set(aggregate.tables["points"])
    return sorted(seen, key=point_order)


def _point_table(manifest: RunManifest, summary: Summary, setting: str, suffix: str) -> list[str]:
    points = point_names(summary, manifest, suffix)
    rows = []
    for model in manifest.models:
        rows.append([model, *(pct(*oa_of(figures(summary, model, suffix, p))) for p in points)])
    table = "Table 8" if not suffix else "Table 9"
    return [
        f"## Syntax-QA {table} layout: OA per knowledge point, {setting}",
        "",
        *markdown_table(["Model", *points], rows),
        "",
    ]


def _type_point_table(
    manifest: RunManifest, summary: Summary, setting: str, suffix: str
) -> list[str]:
    points = point_names(summary, manifest, suffix)
    rows = []
    for (kind, name), header in zip(COLUMNS, HEADERS, strict=True):
        for model in manifest.models:
            cells = []
            for point in points:
                per_seed = figures(summary, model, suffix, point)
                cells.append(pct(*mean_std([s[kind, name] for s in per_seed.values()
                                             if (kind, name) in s])))  # fmt: skip
            rows.append([header, model, *cells])
    table = "Table 10" if not suffix else "Table 12"
    return [
        f"## Syntax-QA {table} layout: each question type per knowledge point, {setting}",
        "",
        *markdown_table(["Metric", "Model", *points], rows),
        "",
    ]


def _correlations(
    manifest: RunManifest, summary: Summary, present: list[tuple[str, str]]
) -> list[str]:
    from ...api import kendall, pearson

    lines = [
        "## Syntax-QA Table 7 layout: correlation between question types across models",
        "",
    ]
    for setting, suffix in present:
        vectors: dict[tuple[str, str], list[float]] = {c: [] for c in COLUMNS}
        models = 0
        for model in manifest.models:
            per_seed = figures(summary, model, suffix)
            means = {c: mean_std([s[c] for s in per_seed.values() if c in s])[0] for c in COLUMNS}
            if any(v is None for v in means.values()):
                continue
            models += 1
            for column in COLUMNS:
                vectors[column].append(float(means[column]))  # type: ignore[arg-type]
        lines += [f"{setting}: {models} model(s) with all four scores.", ""]
        if models < 3:
            lines += ["(Correlations need at least three models evaluated in one run.)", ""]
            continue
        rows = []
        for name, statistic in (("Kendall", kendall), ("Pearson", pearson)):
            for column, header in zip(COLUMNS, HEADERS, strict=True):
                cells = [
                    "" if other == column else _corr(statistic(vectors[column], vectors[other]))
                    for other in COLUMNS
                ]
                rows.append([name, header, *cells])
        lines += [*markdown_table(["", "", *HEADERS], rows), ""]
    return lines


def _corr(value: Any) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"
