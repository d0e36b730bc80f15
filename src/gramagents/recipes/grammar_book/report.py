"""The grammar-book part of an eval report: the paper's Table 3, Figure 4 and Figure 2.

Written into the run folder's `grammar-book/`: `degradation.svg` (Figure 4), `correlation.svg`
(Figure 2), `figures.json` (the numbers behind both and Table 3), and the translations as
plain-text files (`translations/<model>.<direction>.{src,hyp,ref}.txt`, one sentence a line)
that sacrebleu's command line scores to the same figures.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from ...api import RunManifest, Summary, markdown_table, safe_name, write_atomic
from .comet import comet_scores, translation_rows
from .sets import GENERATED

TASKS = (("GB-TASK1", "Task 1"), ("GB-TASK2", "Task 2"), ("GB-TASK3", "Task 3"),
         ("GB-TASK4", "Task 4"))  # fmt: skip
TRANSLATE = "GB-TRANSLATE"
FOLDER = "grammar-book"
METRICS = (("comet", "COMET"), ("spbleu", "spBLEU"), ("bleu", "BLEU"), ("chrf++", "chrF++"))


def translation_stem(model: str, direction: str, taken: set[str] | None = None) -> str:
    """The file-name stem of a model's translations in one direction (`MODEL.DIRECTION`).

    Both parts come from records, so each is made safe (`safe_name`); `taken` holds the
    stems already used in the folder.
    """
    return safe_name(f"{safe_name(model)}.{safe_name(direction)}", taken)


def _triple(row: dict[str, Any]) -> dict[str, str]:
    return {k: row[k] for k in ("src", "mt", "ref")}


def _pm(mean: float | None, std: float | None, digits: int = 2) -> str:
    if mean is None:
        return "—"
    return f"{mean:.{digits}f} ± {std or 0.0:.{digits}f}"


class Figures:
    """Per model: task accuracies (mean, std over seeds) and translation metrics (mean, std)."""

    def __init__(self, folder: Path, manifest: RunManifest, summary: Summary) -> None:
        self.models = list(manifest.models)
        self.tasks = [(t, name) for t, name in TASKS if t in manifest.tasks]
        self.accuracy: dict[tuple[str, str], tuple[float, float]] = {}
        self.curves: list[dict[str, Any]] = []
        for model in self.models:
            for task, name in self.tasks:
                aggregate = summary.aggregates.get((model, task))
                if aggregate is None:
                    continue
                scores = aggregate.scores
                self.accuracy[model, task] = (scores["acc"], scores.get("acc_std", 0.0))
                if task == "GB-TASK4":  # one setting only: no curve (as in Figure 4)
                    continue
                self.curves += [
                    {"task": name, "model": model, "n": c["n"], "mean": c["mean"],
                     "std": c["std"]}
                    for c in aggregate.tables["curve"]
                ]  # fmt: skip
        self.translation: dict[str, dict[str, tuple[float, float]]] = {}
        self.corpus: dict[str, dict[str, Any]] = {}
        self.sets: dict[str, dict[str, Any]] = {}
        self.spbleu: dict[str, Any] = {}
        for model in self.models:
            aggregate = summary.aggregates.get((model, TRANSLATE))
            if aggregate is None:
                continue
            directions = aggregate.tables["directions"]
            self.corpus[model] = directions
            self.sets[model] = aggregate.tables.get("sets", {})
            self.spbleu = aggregate.tables["spbleu"]
            head = directions[next(iter(directions))]["sentence"]
            self.translation[model] = {k: (v["mean"], v["std"]) for k, v in head.items()}
        self.comet_status = ""
        if self.corpus:
            self._comet(folder)

    def _comet(self, folder: Path) -> None:
        """COMET over every set together (MIXED) and, with several sets, per set."""
        rows = translation_rows(folder / "scores.jsonl")
        groups: dict[tuple[str, ...], list[dict[str, str]]] = {
            key: [_triple(r) for r in group] for key, group in rows.items()
        }
        for (model, direction), group in rows.items():
            for name in self.sets.get(model, {}) if len(self.sets.get(model, {})) > 1 else []:
                groups[model, direction, name] = [_triple(r) for r in group if r["set"] == name]
        comet, self.comet_status = comet_scores(groups, folder / FOLDER / "comet.json")
        for key, value in comet.items():
            model, direction = key[0], key[1]
            if len(key) == 3:
                self.sets[model][key[2]].get(direction, {})["comet"] = value
                continue
            if direction == next(iter(self.corpus[model])) and value:
                self.translation[model]["comet"] = (value["mean"], value["std"])
            self.corpus[model][direction]["comet"] = value
        self._write_translations(folder, rows)

    def _write_translations(self, folder: Path, rows: dict[tuple[str, str], list[dict]]) -> None:
        taken: set[str] = set()
        for (model, direction), group in rows.items():
            stem = folder / FOLDER / "translations" / translation_stem(model, direction, taken)
            for part, key in (("src", "src"), ("hyp", "mt"), ("ref", "ref")):
                text = "".join(" ".join(str(r[key]).split()) + "\n" for r in group)
                write_atomic(Path(f"{stem}.{part}.txt"), text)

    def metric_columns(self) -> list[tuple[str, str]]:
        """The translation metrics some model has, in the paper's order."""
        found = {k for values in self.translation.values() for k in values}
        return [(k, name) for k, name in METRICS if k in found]


def _table_3(figures: Figures) -> list[str]:
    metrics = figures.metric_columns()
    header = ["Model", *(f"{n} (μ ± std)" for _, n in metrics),
              *(f"{n} Acc (μ ± std)" for _, n in figures.tasks)]  # fmt: skip
    rows = []
    for model in figures.models:
        translation = figures.translation.get(model, {})
        cells = [_pm(*translation[k]) if k in translation else "—" for k, _ in metrics]
        cells += [
            _pm(*figures.accuracy[model, t]) if (model, t) in figures.accuracy else "—"
            for t, _ in figures.tasks
        ]
        rows.append([model, *cells])
    return [
        "## Grammar-book Table 3 layout",
        "",
        "Translation metrics are sentence-level means ± standard deviations over the "
        "translated pairs (the first direction asked); task accuracies are means ± standard "
        "deviations over seeds, in the base setting.",
        "",
        *markdown_table(header, rows),
        "",
    ]


def _figure_4(figures: Figures, folder: Path) -> list[str]:
    from .plots import degradation_chart, save_svg

    if not figures.curves:
        return []
    save_svg(degradation_chart(figures.curves), folder / FOLDER / "degradation.svg")
    lines = ["## Accuracy as the number of options grows (Figure 4 layout)", "",
             f"![degradation]({FOLDER}/degradation.svg)", ""]  # fmt: skip
    for _, name in figures.tasks:
        if not any(c["task"] == name for c in figures.curves):
            continue
        points = {(c["model"], c["n"]): c for c in figures.curves if c["task"] == name}
        counts = sorted({n for _, n in points})
        rows = [
            [model, *(_pm(points[model, n]["mean"], points[model, n]["std"])
                      if (model, n) in points else "—" for n in counts)]
            for model in figures.models
        ]  # fmt: skip
        lines += [f"{name}:", "", *markdown_table(["model", *(f"N={n}" for n in counts)], rows), ""]
    return lines


def _metric_cells(data: dict[str, Any], columns: list[str]) -> list[str]:
    cells = []
    for key in columns:
        if key == "comet":
            value = data.get("comet") or {}
            cells.append(_pm(value.get("mean"), value.get("std"), 3))
        else:
            score = data["corpus"].get(key)
            cells.append("—" if score is None else f"{score:.2f}")
    return cells


def _table_1(figures: Figures) -> list[str]:
    """The translation sets (the paper's Table 1): sentences and their length, per set."""
    sets = next((s for s in figures.sets.values() if s), {})
    if not sets:
        return []
    rows = []
    for name, directions in sets.items():
        data = next(iter(directions.values()))
        chars = data.get("source_chars", {})
        label = f"{name} (generated pairs)" if name == GENERATED else name
        rows.append([label, data["n"], _pm(chars.get("mean"), chars.get("std"))])
    total = sum(r[1] for r in rows)  # type: ignore[misc]
    return [
        "## Translation sets (Table 1 layout)",
        "",
        f"MIXED: {total} sentences in {len(rows)} set(s), scored together (Table 3) and per set "
        "(below). Sets beside the generated pairs are given in FLORES-200's layout "
        "(`GB-TRANSLATE: {sets: [...]}` in the recipe).",
        "",
        *markdown_table(["set", "sentences", "source characters (μ ± std)"], rows),
        "",
    ]


def _translation(figures: Figures) -> list[str]:
    if not figures.corpus:
        return []
    spbleu = figures.spbleu
    lines = [
        "## Translation",
        "",
        "Corpus scores from sacrebleu (as `sacrebleu REF -i HYP -m bleu chrf "
        "--chrf-word-order 2` prints them; spBLEU with `-tok flores200`), per direction, over "
        "every set together (MIXED) and per set. The translations (MIXED) are in "
        f"`{FOLDER}/translations/`.",
        "",
        "- spBLEU: "
        + ("computed (" + spbleu.get("why", "") + ")" if spbleu.get("available")
           else "NOT computed: " + spbleu.get("why", "")),
        f"- COMET: {figures.comet_status}",
        "",
    ]  # fmt: skip
    columns = [k for k, _ in METRICS if any(k in d.get("corpus", {}) or k in d
                                             for v in figures.corpus.values()
                                             for d in v.values())]  # fmt: skip
    names = dict(METRICS)
    rows = []
    for model, directions in figures.corpus.items():
        sets = figures.sets.get(model, {})
        groups = [("MIXED", directions), *(sets.items() if len(sets) > 1 else [])]
        for name, by_direction in groups:
            for direction, data in by_direction.items():
                cells = _metric_cells(data, columns)
                rows.append([model, name, direction, str(data["n"]), *cells])
    header = ["model", "set", "direction", "sentences", *(names[k] for k in columns)]
    return lines + markdown_table(header, rows) + [""]


def _figure_3(figures: Figures, folder: Path) -> list[str]:
    from .plots import save_svg
    from .radar import radar

    accuracy = {key: value[0] for key, value in figures.accuracy.items()}
    rings, labels = {}, set()
    for model, metrics in figures.translation.items():
        head = next(iter(figures.corpus[model].values()))["corpus"]  # MIXED, first direction
        if "comet" in metrics:
            rings[model], label = metrics["comet"][0], "COMET"
        else:
            rings[model], label = head["chrf++"] / 100.0, "chrF++ / 100"
        labels.add(label)
    figure = radar(figures.models, accuracy, rings, " or ".join(sorted(labels)) or "none")
    if figure is None:
        return []
    save_svg(figure.spec, folder / FOLDER / "radar.svg")
    return [f"## {figure.title}", "", figure.caption, "", f"![radar]({FOLDER}/radar.svg)", ""]


def correlations(figures: Figures) -> tuple[list[str], list[dict[str, Any]]]:
    """Pearson and Spearman among task accuracies and translation metrics, across models."""
    from scipy import stats

    series: dict[str, list[float]] = {}
    models = [m for m in figures.models if all((m, t) in figures.accuracy for t, _ in figures.tasks)
              and m in figures.translation]  # fmt: skip
    for task, name in figures.tasks:
        series[name] = [figures.accuracy[m, task][0] for m in models]
    for key, name in figures.metric_columns():
        if all(key in figures.translation[m] for m in models):
            series[name] = [figures.translation[m][key][0] for m in models]
    order = list(series)
    cells = []
    for method, fn in (("Pearson", stats.pearsonr), ("Spearman", stats.spearmanr)):
        for row in order:
            for column in order:
                r = None
                if len(models) >= 2:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        value = float(fn(series[row], series[column])[0])
                    r = None if value != value else round(value, 4)  # NaN: undefined
                cells.append({"method": method, "row": row, "column": column, "r": r})
    return order, cells


def _figure_2(figures: Figures, folder: Path) -> tuple[list[str], list[dict[str, Any]]]:
    from .plots import correlation_chart, save_svg

    if not figures.tasks or not figures.translation:
        return [], []
    order, cells = correlations(figures)
    n = sum(1 for m in figures.models if m in figures.translation)
    lines = ["## Grammar against translation (Table 3 correlations, Figure 2 layout)", ""]
    if n < 3:
        lines += [
            f"Across {n} model(s): with fewer than three models a correlation is ±1 or "
            "undefined (—); evaluate more models for a meaningful figure.",
            "",
        ]
    save_svg(correlation_chart(cells, order), folder / FOLDER / "correlation.svg")
    lines += [f"![correlation]({FOLDER}/correlation.svg)", ""]
    tasks = [name for _, name in figures.tasks]
    metrics = [name for name in order if name not in tasks]
    value = {(c["method"], c["row"], c["column"]): c["r"] for c in cells}
    rows = [
        [task, method, *("—" if value[method, task, m] is None else f"{value[method, task, m]:.2f}"
                         for m in metrics)]
        for task in tasks for method in ("Pearson", "Spearman")
    ]  # fmt: skip
    lines += markdown_table(["task", "correlation", *metrics], rows) + [""]
    return lines, cells


def not_drawn(figures: Figures, drawn: dict[str, bool]) -> list[str]:
    """Why each figure of the paper this run has not drawn is missing (nothing when all are)."""
    names = ", ".join(name for _, name in figures.tasks) or "none"
    why = {
        "4": "Figure 4 (accuracy as the options grow) needs Task 1, 2 or 3 scored at several "
        f"numbers of options (this run's grammar tasks: {names})",
        "3": f"Figure 3 (radar) needs a grammar task's accuracy (this run's: {names})",
        "2": "Figure 2 (grammar against translation) needs both a grammar task and "
        f"translations ({TRANSLATE}) scored"
        + ("" if figures.translation else "; this run scored no translation"),
    }
    missing = [f"- {why[n]}." for n, made in drawn.items() if not made]
    if not missing:
        return []
    return ["## Figures not drawn", "", *missing, ""]


def grammar_book_section(folder: Path, manifest: RunManifest, summary: Summary) -> list[str]:
    """Table 3, Figure 4, the translation scores and Figure 2, with their files."""
    if not any(t in manifest.tasks for t, _ in (*TASKS, (TRANSLATE, ""))):
        return []
    figures = Figures(folder, manifest, summary)
    curves, radar = _figure_4(figures, folder), _figure_3(figures, folder)
    lines = _table_3(figures) + curves + radar
    lines += _table_1(figures) + _translation(figures)
    correlation, cells = _figure_2(figures, folder)
    correlation += not_drawn(figures, {"4": bool(curves), "3": bool(radar), "2": bool(cells)})
    data = {
        "accuracy": [
            {"model": m, "task": t, "mean": v[0], "std": v[1]}
            for (m, t), v in figures.accuracy.items()
        ],
        "translation": figures.translation,
        "translation_sets": figures.sets,
        "degradation": figures.curves,
        "correlation": cells,
    }
    write_atomic(folder / FOLDER / "figures.json", json.dumps(data, indent=1) + "\n")
    return lines + correlation
