"""Agreement of a rubric judge with human raters, and the files that feed it.

EduEval validates its GPT-4 judge by scoring a sample of answers by hand and reporting the
Pearson correlation of judge and human scores (above 0.87 on every task). `agreement_report`
computes that and more (see `statistics`): Spearman, Kendall, quadratic-weighted kappa,
Krippendorff's alpha, exact and within-k agreement, bootstrap 95% intervals over items, the
human-human ceiling computed the same way, and the correlation of judge scores with answer
length. The judge's scores come from an eval run's `scores.jsonl` (`judge_scores`), the human
ones from a CSV file (`read_human_scores`).
"""

from __future__ import annotations

import io
import itertools
import json
import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GramagentsError, InputError, RunError
from ..runtime.rundir import iter_jsonl
from ..sources._text import csv_reader, iter_csv, read_utf8
from .statistics import (
    STATISTICS,
    exact_agreement,
    kendall,
    krippendorff_alpha,
    pair_statistics,
    pearson,
    percentile_interval,
    quadratic_kappa,
    resample_counts,
    spearman,
    weighted_alpha,
    weighted_statistics,
    within_agreement,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "STATISTICS",
    "AgreementSettings",
    "JudgeScores",
    "agreement_report",
    "exact_agreement",
    "judge_scores",
    "kendall",
    "krippendorff_alpha",
    "pair_statistics",
    "pearson",
    "quadratic_kappa",
    "read_human_scores",
    "spearman",
    "within_agreement",
]

DEFAULT_THRESHOLD = 0.87
"""EduEval's judge-human Pearson correlation (Appendix C)."""


# --- the report -------------------------------------------------------------------------------


def _clean(value: float | None) -> float | None:
    """JSON-ready: NaN becomes None, noise past 6 decimals goes."""
    return None if value is None or math.isnan(value) else round(float(value), 6)


def _nanmean(values: Iterable[float] | np.ndarray, axis: int | None = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.asarray(values, dtype=float), axis=axis)


@dataclass
class _Comparisons:
    """Point estimates and bootstrap draws of one or more comparisons, to be averaged."""

    points: list[dict[str, float]]
    draws: list[dict[str, np.ndarray]]

    def block(self) -> dict[str, dict[str, Any]]:
        """`{statistic: {"value", "ci"}}`, each averaged over the comparisons."""
        result = {}
        for name in self.points[0]:
            value = float(_nanmean([p[name] for p in self.points]))
            draws = _nanmean(np.vstack([d[name] for d in self.draws]), axis=0)
            result[name] = {
                "value": _clean(value),
                "ci": [_clean(v) for v in percentile_interval(draws)],
            }
        return result


@dataclass
class _Table:
    """Judge and human scores aligned on the items both sides scored."""

    items: list[str]
    raters: list[str]
    judge: np.ndarray
    humans: np.ndarray
    """(items, raters), NaN where a rater did not score an item."""
    judge_only: int
    human_only: int

    @property
    def human_mean(self) -> np.ndarray:
        return _nanmean(self.humans, axis=1)

    def n_ratings(self, row: int | None = None) -> int:
        present = ~np.isnan(self.humans if row is None else self.humans[row])
        return int(present.sum())


def _align(judge: Mapping[str, float], human_rows: Iterable[tuple[str, str, float]]) -> _Table:
    ratings: dict[str, dict[str, float]] = {}
    for item, rater, score in human_rows:
        by_rater = ratings.setdefault(str(item), {})
        if str(rater) in by_rater:
            raise ValueError(f"rater {rater!r} scored item {item!r} twice")
        by_rater[str(rater)] = float(score)
    items = sorted(set(judge) & set(ratings))
    if len(items) < 2:
        raise GramagentsError(
            f"only {len(items)} item(s) have both a judge score and a human score; need at "
            f"least 2 (judged items such as {_some(judge)}; rated items such as {_some(ratings)})"
        )
    raters = sorted({r for item in items for r in ratings[item]})
    column = {r: j for j, r in enumerate(raters)}
    humans = np.full((len(items), len(raters)), np.nan)
    for i, item in enumerate(items):
        for rater, score in ratings[item].items():
            humans[i, column[rater]] = score
    return _Table(
        items=items,
        raters=raters,
        judge=np.array([float(judge[i]) for i in items]),
        humans=humans,
        judge_only=len(set(judge) - set(ratings)),
        human_only=len(set(ratings) - set(judge)),
    )


def _some(ids: Iterable[str]) -> str:
    shown = sorted(ids)[:3]
    return ", ".join(repr(i) for i in shown) if shown else "none"


def _compare(
    pairs: Iterable[tuple[np.ndarray, np.ndarray]], counts: np.ndarray, within: float
) -> _Comparisons:
    pairs = list(pairs)
    return _Comparisons(
        points=[pair_statistics(x, y, within) for x, y in pairs],
        draws=[weighted_statistics(x, y, counts, within) for x, y in pairs],
    )


@dataclass(frozen=True)
class AgreementSettings:
    """How agreement is measured: the warning threshold, within-k and the bootstrap."""

    threshold: float = DEFAULT_THRESHOLD
    """Warn when the judge-vs-human-mean Pearson correlation is below this."""
    within: float = 5.0
    """The k of within-k agreement, in score points."""
    n_boot: int = 1000
    """Bootstrap resamples of the items for the 95% intervals (0: no intervals)."""
    seed: int = 0
    """Seed of the bootstrap; the same seed gives the same intervals."""

    def as_json(self) -> dict[str, Any]:
        """The report's `settings` block."""
        return {
            "threshold": self.threshold,
            "within": self.within,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "confidence": 0.95,
        }


def agreement_report(
    judge: Mapping[str, float],
    human_rows: Iterable[tuple[str, str, float]],
    lengths: Mapping[str, int] | None = None,
    settings: AgreementSettings | None = None,
) -> dict[str, Any]:
    """Everything about how well a judge agrees with human raters.

    Args:
        judge: The judge's score per item id.
        human_rows: (item id, rater, score) triples; a rater scores an item at most once.
        lengths: Length of each judged answer (characters), for the length-bias correlation.
        settings: Threshold, within-k and bootstrap (default: `AgreementSettings()`).

    Returns:
        A JSON-ready dict (NaN written as None). Statistic blocks map each name of
        `STATISTICS` to `{"value", "ci": [low, high]}`: `judge_vs_human_mean`,
        `judge_vs_raters` (the judge against each rater, averaged over raters: the figure to
        set beside the ceiling) and `human_ceiling` (rater against rater, averaged over rater
        pairs; None with one rater). Also `alpha_all_humans` (all raters at once),
        `length_bias`, `below_threshold`, `warning` and `points` (per item: judge score,
        human mean, number of ratings).

    Raises:
        GramagentsError: Fewer than two items have both a judge and a human score.
    """
    settings = settings or AgreementSettings()
    table = _align(judge, human_rows)
    r = pearson(table.judge, table.human_mean)
    below = bool(math.isnan(r) or r < settings.threshold)
    return {
        "n_items": len(table.items),
        "n_raters": len(table.raters),
        "raters": table.raters,
        "n_ratings": table.n_ratings(),
        "judge_only": table.judge_only,
        "human_only": table.human_only,
        "settings": settings.as_json(),
        **_statistic_blocks(table, settings),
        "length_bias": _length_bias(judge, table, lengths),
        "below_threshold": below,
        "warning": _warning(r, settings.threshold) if below else None,
        "points": _points(table),
    }


def _statistic_blocks(table: _Table, settings: AgreementSettings) -> dict[str, Any]:
    """Judge against the human mean and against each rater; rater against rater."""
    counts = resample_counts(len(table.items), settings.n_boot, settings.seed)
    within = settings.within
    humans = [table.humans[:, j] for j in range(len(table.raters))]
    pairs = list(itertools.combinations(range(len(table.raters)), 2))
    blocks: dict[str, Any] = {
        "judge_vs_human_mean": _compare([(table.judge, table.human_mean)], counts, within).block(),
        "judge_vs_raters": _compare([(table.judge, h) for h in humans], counts, within).block(),
        "rater_pairs": len(pairs),
        "human_ceiling": None,
        "alpha_all_humans": None,
    }
    if pairs:
        ceiling = _compare([(humans[a], humans[b]) for a, b in pairs], counts, within)
        blocks["human_ceiling"] = ceiling.block()
        blocks["alpha_all_humans"] = {
            "value": _clean(krippendorff_alpha(table.humans.T)),
            "ci": [_clean(v) for v in percentile_interval(weighted_alpha(table.humans.T, counts))],
        }
    return blocks


def _points(table: _Table) -> list[dict[str, Any]]:
    """Per item: judge score, human mean and number of ratings (the plot's points)."""
    return [
        {
            "item_id": item,
            "judge": _clean(table.judge[i]),
            "human_mean": _clean(table.human_mean[i]),
            "n_ratings": table.n_ratings(i),
        }
        for i, item in enumerate(table.items)
    ]


def _length_bias(
    judge: Mapping[str, float], table: _Table, lengths: Mapping[str, int] | None
) -> dict[str, Any] | None:
    """Pearson of score with answer length.

    The judge's over every judged item with a length; the human mean's over the rated ones, to
    tell a judge's bias from a real effect of length.
    """
    if not lengths:
        return None
    judged = [i for i in judge if i in lengths]
    rated = [k for k, item in enumerate(table.items) if item in lengths]
    return {
        "n": len(judged),
        "judge_pearson": _clean(
            pearson([judge[i] for i in judged], [float(lengths[i]) for i in judged])
        ),
        "human_pearson": _clean(
            pearson(table.human_mean[rated], [float(lengths[table.items[k]]) for k in rated])
        ),
    }


def _warning(r: float, threshold: float) -> str:
    if math.isnan(r):
        return (
            "the judge-human Pearson correlation cannot be computed (constant scores); "
            "do not trust this judge's scores without review"
        )
    return (
        f"judge-human Pearson {r:.3f} is below {threshold:g}; "
        "do not trust this judge's scores without review"
    )


# --- inputs -----------------------------------------------------------------------------------


def read_human_scores(path: str | Path) -> list[tuple[str, str, float]]:
    """Read human ratings from a CSV file with the columns `item_id` (or `id`), `rater`, `score`.

    UTF-8 with or without BOM; other columns are ignored; a row with an empty score is a
    missing rating and is skipped.

    Returns:
        (item id, rater, score) per rating, in file order.

    Raises:
        InputError: The file is missing, empty or malformed; the message names line and field.
    """
    path = Path(path)
    text = read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty; expected the header item_id,rater,score", line=1)
    header = [c.strip() for c in next(csv_reader(io.StringIO(text, newline="")), [])]
    id_column = "id" if "item_id" not in header and "id" in header else "item_id"
    ratings: list[tuple[str, str, float]] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in iter_csv(path, text, (id_column, "rater", "score")):
        item, rater, raw = row[id_column].strip(), row["rater"].strip(), row["score"].strip()
        if not item:
            raise InputError(path, "empty item id", line=line, field=id_column)
        if not rater:
            raise InputError(path, "empty rater", line=line, field="rater")
        if not raw:
            continue
        try:
            score = float(raw)
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(path, f"not a number: {raw!r}", line=line, field="score")
        if (item, rater) in seen:
            raise InputError(
                path,
                f"rater '{rater}' scored item '{item}' twice (first at line {seen[item, rater]})",
                line=line,
                field="score",
            )
        seen[item, rater] = line
        ratings.append((item, rater, score))
    if not ratings:
        raise InputError(path, "no ratings: the file has a header but no scores", line=2)
    return ratings


@dataclass
class JudgeScores:
    """One model's judged items of an eval run."""

    model: str
    scores: dict[str, float]
    """`judge_total` per item id."""
    lengths: dict[str, int]
    """Length (characters) of each judged answer, where the run recorded it."""
    rubrics: dict[str, str]
    """Rubric id to rubric hash, for the rubrics the items were judged with."""


def judge_scores(run_dir: str | Path, model: str | None = None) -> JudgeScores:
    """Read the judge's totals from an eval run's `scores.jsonl`.

    Args:
        run_dir: The run folder.
        model: Which model's answers, when the run judged several.

    Raises:
        RunError: No scores file, no judged items, an unknown model, or several models and
            none named.
    """
    run = Path(run_dir)
    path = run / "scores.jsonl"
    if not run.is_dir():
        raise RunError(f"{run}: not a run folder")
    if not path.is_file():
        raise RunError(f"{run}: no scores.jsonl; run `gramagents eval` first")
    by_model: dict[str, list[dict[str, Any]]] = {}
    try:
        for record in iter_jsonl(path):
            judged = record.get("scores", {}).get("judge_total") is not None
            if judged and not record.get("invalid"):  # a failed judgment has no score to compare
                by_model.setdefault(str(record.get("model")), []).append(record)
    except json.JSONDecodeError as exc:
        raise RunError(
            f"{path}: a line is not valid JSON ({exc.msg}); re-run the eval to repair it"
        ) from None
    if not by_model:
        raise RunError(f"{path}: no judged items (no record has the score 'judge_total')")
    if model is None:
        if len(by_model) > 1:
            raise RunError(
                f"{run}: judge scores for several models ({', '.join(sorted(by_model))}); "
                "choose one with --model"
            )
        model = next(iter(by_model))
    if model not in by_model:
        raise RunError(
            f"{run}: no judge scores for model '{model}' "
            f"(models with judge scores: {', '.join(sorted(by_model))})"
        )
    result = JudgeScores(model=model, scores={}, lengths={}, rubrics={})
    for record in by_model[model]:
        item = str(record["item_id"])
        result.scores[item] = float(record["scores"]["judge_total"])
        details = record.get("details") or {}
        if isinstance(details.get("answer_chars"), int | float):
            result.lengths[item] = int(details["answer_chars"])
        verdict = details.get("judge") or {}
        if verdict.get("rubric"):
            result.rubrics[str(verdict["rubric"])] = str(verdict.get("rubric_hash") or "")
    return result
