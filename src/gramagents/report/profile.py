"""The profile as markdown: `report.md` of a profile folder, and `gramagents report A B`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..records import ProfileManifest
from .markdown import markdown_table
from .mdtext import Markdown, md_text

POOLING = (
    "Chance-corrected score: (score − RANDOM) / (1 − RANDOM) over the competence's items, "
    "each item's score its task's headline score as a share of [0, 1] (accuracy; F0.5 for "
    "corrections; judge points / 100 for judged answers) and its RANDOM its task's random "
    "baseline (0 where a random guess scores nothing). 0 is chance, 1 every item right; "
    "below 0 is worse than chance. Intervals: percentile bootstrap over items, 95 %."
)


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def _interval(estimate: dict[str, float | None]) -> str:
    low, high = estimate.get("low"), estimate.get("high")
    if low is None or high is None:
        return _num(estimate["value"])
    return f"{_num(estimate['value'])} [{_num(low)}, {_num(high)}]"


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def competence_lines(data: dict[str, Any]) -> list[str]:
    """The table of models × competences, then each competence's tasks."""
    lines = ["## Competences", "", POOLING, *_method_note(data), ""]
    order = list(data["suite"]["competences"])
    rows, tasks = [], []
    for model, blocks in data["competences"].items():
        for competence in order:
            block = blocks.get(competence)
            method = method_cell(data, model, competence)
            if block is None:
                rows.append([model, competence, method or "—", "—", "0", "—", "—", "—"])
                continue
            rows.append(
                [
                    model,
                    competence,
                    method,
                    _interval(block["corrected"]),
                    str(block["n"]),
                    _num(block["score"]),
                    _num(block["random"]),
                    _num(block["invalid_rate"], 2),
                ]
            )
            tasks += _task_rows(model, competence, block)
    header = [
        "model",
        "competence",
        "measured by",
        "chance-corrected [95 % CI]",
        "items",
        "score",
        "RANDOM",
        "invalid",
    ]
    lines += markdown_table(header, rows)
    lines += ["", "### Tasks behind each competence", ""]
    lines += markdown_table(
        [
            "model",
            "competence",
            "task",
            "items",
            "score",
            "RANDOM",
            "chance-corrected [95 % CI]",
            "invalid",
        ],
        tasks,
    )
    return lines


def _task_rows(model: str, competence: str, block: dict[str, Any]) -> list[list[str]]:
    return [
        [
            model,
            competence,
            task,
            str(tb["n"]),
            _num(tb["score"]),
            _num(tb["random"]),
            _interval(tb["corrected"]),
            _num(tb["invalid_rate"], 2),
        ]
        for task, tb in block["tasks"].items()
    ]


def method_cell(data: dict[str, Any], model: str, competence: str) -> str:
    """How a competence of a model was measured, where minimal pairs give a choice."""
    chosen = (data.get("methods") or {}).get(model, {}).get(competence)
    if not chosen:
        return ""
    if chosen.get("method") is None:
        return f"not measured: {chosen.get('reason', '')}"
    return str(chosen.get("described") or chosen["method"])


def _method_note(data: dict[str, Any]) -> list[str]:
    if not data.get("methods") or not any(m for m in data["methods"].values()):
        return []
    return [
        "",
        "Minimal pairs are measured by the first method the suite accepts that the model "
        "supports: log-probability (the grammatical sentence likelier) or forced choice (asked "
        "which sentence is acceptable, in both orders). The two are different measurements: "
        "models measured by different methods are not compared on that competence.",
    ]


def weakest_lines(data: dict[str, Any]) -> list[str]:
    """Each model's weakest grammar points with example items and its answers."""
    lines = [
        "",
        "## Weakest grammar points",
        "",
        f"Items joined by grammar-point id (`namespace:point`) across entries and tasks; "
        f"points with at least {data['settings']['min_items']} items, worst first. Each "
        "example links to the item itself: `evals/ENTRY/report.html#item=ID` opens it in its "
        "eval's viewer (a grammar item of corrections opens its first sentence).",
    ]
    for model, points in data["weakest"].items():
        lines += ["", f"### {md_text(model)}", ""]
        rows = []
        for point in points:
            shown = Markdown(
                "; ".join(
                    f"[{md_text(e['entry'])} {md_text(e['item_id'])}]({example_address(e)}) "
                    f"{md_text(reply(e))}, gold {md_text(_short(e['gold']))}"
                    for e in point["examples"]
                )
            )
            rows.append(
                [
                    point["point"],
                    str(point["n"]),
                    _num(point["score"]),
                    _num(point["corrected"]),
                    ", ".join(point["tasks"]),
                    shown,
                ]
            )
        lines += (
            markdown_table(
                [
                    "point",
                    "items",
                    "score",
                    "chance-corrected",
                    "tasks",
                    "examples (model's answer)",
                ],
                rows,
            )
            if rows
            else ["(none)"]
        )
    return lines


def reply(example: dict[str, Any]) -> str:
    """What the model replied to an example item: its answer, or that none could be read."""
    if example.get("invalid"):
        reason = example.get("reason")
        return "gave an invalid reply" + (f" ({reason})" if reason else "")
    return f"answered {_short(example['answer'])}"


def example_address(example: dict[str, Any]) -> str:
    """Where a weak point's example opens: its item in its eval's viewer, from the profile.

    A unit of several items (a grammar item's corrections) opens its first item; the eval
    folder is the one whose records hold it (`evals/NAME`, or `evals/NAME+choice`).
    """
    from .view.markup import item_address  # the viewer's own addressing

    shown = example.get("shown_item") or example["item_id"]
    folder = example.get("eval") or f"evals/{example['entry']}"
    return item_address(shown, f"{folder}/report.html")


def _short(value: Any) -> str:
    """A value in a table cell: its first 40 characters, quoted (the table escapes markup)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"“{' '.join(text.split())[:40]}”"


def paired_lines(comparisons: list[dict[str, Any]]) -> list[str]:
    """Per pair of models: differences with paired intervals, McNemar and Holm p-values."""
    if not comparisons:
        return []
    lines = [
        "",
        "## Paired comparison",
        "",
        "A − B on the items both models answered: the mean difference with a paired "
        "bootstrap 95 % interval; for items scored right or wrong, McNemar's exact test on "
        "the items one model got right and the other wrong, and its p-value after Holm's "
        "correction over all the tests of the pair (tasks and competences).",
    ]
    for pair in comparisons:
        lines += ["", f"### {md_text(pair['a'])} − {md_text(pair['b'])} ({pair['n']} items)", ""]
        lines += [
            f"- {r['kind']} {r['name']}: not compared. {r['why']}." for r in pair.get("refused", [])
        ]
        if not pair["rows"]:
            continue
        lines += [""] if pair.get("refused") else []
        rows = [
            [
                r["kind"],
                r["name"],
                str(r["n"]),
                _interval(r["difference"]),
                f"{r['a_only']} / {r['b_only']}" if r["p"] is not None else "—",
                _p(r["p"]),
                _p(r["p_holm"]),
            ]
            for r in pair["rows"]
        ]
        lines += markdown_table(
            [
                "",
                "name",
                "items",
                "A − B [95 % CI]",
                "only A / only B right",
                "p (McNemar)",
                "p (Holm)",
            ],
            rows,
        )
    return lines


def render_profile(manifest: ProfileManifest, data: dict[str, Any]) -> str:
    """The whole `report.md` of a profile."""
    suite = data["suite"]
    lines = [f"# Profile {md_text(manifest.run_id)}: suite {md_text(suite['name'])}", ""]
    if suite.get("description"):
        lines += [md_text(suite["description"]), ""]
    lines += [
        f"Models: {', '.join(map(md_text, data['models'])) or '(none)'}. "
        f"Status: {manifest.status}"
        + (f" ({md_text(manifest.reason)})" if manifest.reason else "")
        + ".",
        "",
    ]
    rows = [
        [
            name,
            e.get("build") or e.get("source", ""),
            ", ".join(str(x["eval"]) for x in e.get("evals", [e]) if x.get("eval")),
            str(e.get("limit") or "all"),
            ", ".join(f"{t} {n}" for t, n in e.get("tasks", {}).items()),
            e.get("status", ""),
        ]
        for name, e in manifest.entries.items()
    ]
    lines += markdown_table(
        ["entry", "build or dataset", "eval", "limit", "items per task", "status"], rows
    )
    lines += ["", *competence_lines(data), *weakest_lines(data), *paired_lines(data["paired"])]
    return "\n".join(lines) + "\n"


def read_profile(folder: Path) -> dict[str, Any] | None:
    """A profile folder's `profile.json`, if it has been written."""
    path = folder / "profile.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
