"""Report tables of the GEC recipe, laid out as CTSEG's Tables 3, 4 and 6 (scores in percent)."""

from __future__ import annotations

from ...api import RunManifest, Summary, markdown_table

PROMPTS = (("GEC-BASELINE", "Baseline"), ("GEC-GUIDED", "Grammar-item-guided"))


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.2f}"


def gec_sections(manifest: RunManifest, summary: Summary) -> list[str]:
    """Tables 3, 4 and 6 for every model with GEC corrections; nothing when there are none."""
    present = [
        (t, name)
        for t, name in PROMPTS
        if any((m, t) in summary.aggregates for m in manifest.models)
    ]
    if not present:
        return []
    return [
        *_table_3(manifest, summary, present),
        *_table_4(manifest, summary, present),
        *_table_6(manifest, summary, present),
        "",
    ]


Present = list[tuple[str, str]]
"""The GEC tasks the run has, with the prompt names the paper's tables use."""


def _table_3(manifest: RunManifest, summary: Summary, present: Present) -> list[str]:
    lines = [
        "## CTSEG Table 3 layout: overall scores",
        "",
        "Macro averages over grammar items of M2 precision, recall and F0.5 (in percent), "
        "over the whole set and per CEFR level.",
        "",
    ]
    rows = []
    for model in manifest.models:
        for task, name in present:
            aggregate = summary.aggregates.get((model, task))
            if aggregate is None:
                continue
            tables = aggregate.tables
            rows.append(
                [model, name, "ALL", *(_pct(tables["overall"][k]) for k in ("p", "r", "f0.5"))]
            )
            for level, scores in tables["levels"].items():
                rows.append(["", "", level, *(_pct(scores[k]) for k in ("p", "r", "f0.5"))])
    return lines + markdown_table(["Model", "Prompt", "Category", "P", "R", "F0.5"], rows)


def _table_4(manifest: RunManifest, summary: Summary, present: Present) -> list[str]:
    lines = [
        "",
        "## CTSEG Table 4 layout: the weakest grammar items",
        "",
        "Recall per grammar item (in percent); for each CEFR level the five items with the "
        "lowest average recall over the models and prompts shown.",
        "",
    ]
    columns = [
        (m, t, n) for m in manifest.models for t, n in present if (m, t) in summary.aggregates
    ]
    recall: dict[str, dict[tuple[str, str], float]] = {}
    about: dict[str, tuple[str, str]] = {}
    for model, task, _ in columns:
        for item in summary.aggregates[model, task].tables["items"]:
            recall.setdefault(item["item"], {})[model, task] = item["r"]
            about[item["item"]] = (str(item["level"]), item["name"])
    rows = []
    for level in sorted({lv for lv, _ in about.values()}):
        items = [i for i in recall if about[i][0] == level]
        average = {i: sum(recall[i].values()) / len(recall[i]) for i in items}
        for item in sorted(items, key=lambda i: (average[i], i))[:5]:
            rows.append(
                [
                    item,
                    level,
                    about[item][1],
                    *(_pct(recall[item].get((m, t))) for m, t, _ in columns),
                    _pct(average[item]),
                ]
            )
    header = [
        "ID",
        "CL",
        "Grammar item",
        *(f"{m} ({n})" if len(present) > 1 else m for m, _, n in columns),
        "Avg.",
    ]
    return lines + markdown_table(header, rows)


def _table_6(manifest: RunManifest, summary: Summary, present: Present) -> list[str]:
    lines = [
        "",
        "## CTSEG Table 6 layout: targeted recall",
        "",
        "Recall (in percent) with the Step 2 reference only, which uses the grammar item "
        "(Single Ref), and with every reference (All Ref).",
        "",
    ]
    rows = []
    for model in manifest.models:
        found = {t: summary.aggregates.get((model, t)) for t, _ in present}
        for task, name in present:
            aggregate = found[task]
            if aggregate is not None:
                rows.append(
                    [
                        model,
                        name,
                        _pct(aggregate.scores["targeted_recall_single"]),
                        _pct(aggregate.scores["targeted_recall_all"]),
                    ]
                )
        base, guided = found.get("GEC-BASELINE"), found.get("GEC-GUIDED")
        if base is not None and guided is not None:
            rows.append(
                [
                    model,
                    "Δ",
                    *(
                        f"{100 * (guided.scores[k] - base.scores[k]):+.2f}"
                        for k in ("targeted_recall_single", "targeted_recall_all")
                    ),
                ]
            )
    return lines + markdown_table(["Model", "Prompt", "Single Ref", "All Ref"], rows)
