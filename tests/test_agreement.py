"""Judge-human agreement: statistics against scipy, sklearn and textbook formulas; files; CLI."""

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from gramagents.errors import InputError, RunError
from gramagents.judging.agreement import (
    AgreementSettings,
    agreement_report,
    judge_scores,
    read_human_scores,
)
from gramagents.judging.statistics import (
    STATISTICS,
    exact_agreement,
    kendall,
    krippendorff_alpha,
    pair_statistics,
    pearson,
    percentile_interval,
    quadratic_kappa,
    resample_counts,
    round_scores,
    spearman,
    weighted_alpha,
    weighted_statistics,
    within_agreement,
)
from gramagents.records import EvalManifest

NAN = math.nan


def scores(seed: int = 0, n: int = 60, noise: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(30, 95, n)
    x = np.round(truth + rng.normal(0, noise, n), 1)
    y = np.round(truth + rng.normal(0, noise, n))
    x[[3, 11]] = NAN
    y[[11, 20, n - 5]] = NAN
    return x, y


# --- plain statistics -------------------------------------------------------------------------


def test_correlations_equal_scipy_with_missing_ratings():
    x, y = scores()
    keep = ~(np.isnan(x) | np.isnan(y))
    assert keep.sum() == 56
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x[keep], y[keep]).statistic, abs=1e-12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x[keep], y[keep]).statistic, abs=1e-12)
    assert kendall(x, y) == pytest.approx(stats.kendalltau(x[keep], y[keep]).statistic, abs=1e-12)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall([1, NAN], [2, 3]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_quadratic_kappa_equals_sklearn(seed):
    x, y = scores(seed)
    keep = ~(np.isnan(x) | np.isnan(y))
    a, b = round_scores(x[keep]).astype(int), round_scores(y[keep]).astype(int)
    expected = cohen_kappa_score(a, b, weights="quadratic")
    assert quadratic_kappa(x, y) == pytest.approx(expected, abs=1e-12)
    # categories with gaps: weights follow positions in the union of categories, as sklearn's
    g, h = [1, 5, 5, 9, 20, 20], [1, 5, 9, 9, 20, 1]
    assert quadratic_kappa(g, h) == pytest.approx(
        cohen_kappa_score(g, h, weights="quadratic"), abs=1e-12
    )


def test_rounding_is_half_up():
    assert list(round_scores([82.5, 83.5, 82.49, -0.5])) == [83, 84, 82, 0]
    assert exact_agreement([82.5, 70], [83, 71]) == 0.5
    assert within_agreement([80, 70, 60], [85, 76, 60], k=5) == pytest.approx(2 / 3)
    assert math.isnan(exact_agreement([NAN], [1]))


def alpha_by_pairs(data: np.ndarray, delta) -> float:
    """Krippendorff's alpha from its textbook definition, by enumerating value pairs.

    D_o: over units with m >= 2 values, the mean disagreement of all ordered pairs of values
    from different raters, each unit's pairs weighted 1/(m - 1); D_e: the disagreement of all
    ordered pairs of pairable values, wherever they come from. alpha = 1 - D_o / D_e.
    """
    units = [[v for v in data[:, u] if not math.isnan(v)] for u in range(data.shape[1])]
    units = [values for values in units if len(values) >= 2]
    pooled = [v for values in units for v in values]
    n = len(pooled)
    observed = (
        sum(
            sum(delta(a, b) for a, b in itertools.permutations(values, 2)) / (len(values) - 1)
            for values in units
        )
        / n
    )
    expected = sum(delta(a, b) for a, b in itertools.permutations(pooled, 2)) / (n * (n - 1))
    return 1 - observed / expected


def test_krippendorff_alpha_textbook_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
            [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
        ]
    )
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_krippendorff_alpha_equals_the_pairwise_definition(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 8, 25)
    data = (truth + rng.integers(-2, 3, (4, 25))).astype(float)
    data[rng.random(data.shape) < 0.3] = NAN
    interval = alpha_by_pairs(data, lambda a, b: (a - b) ** 2)
    nominal = alpha_by_pairs(data, lambda a, b: float(a != b))
    assert krippendorff_alpha(data) == pytest.approx(interval, abs=1e-12)
    assert krippendorff_alpha(data, "nominal") == pytest.approx(nominal, abs=1e-12)
    assert weighted_alpha(data, np.ones((1, 25)))[0] == pytest.approx(interval, abs=1e-12)


def test_alpha_of_two_raters_equals_their_pair_statistics():
    x, y = scores(4)
    assert pair_statistics(x, y)["alpha"] == krippendorff_alpha(np.vstack([x, y]))
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))


# --- bootstrap --------------------------------------------------------------------------------


def test_resampled_statistics_equal_the_plain_ones_on_resampled_arrays():
    x, y = scores(5, n=30)
    counts = resample_counts(30, n_boot=40, seed=3)
    assert counts.shape == (40, 30)
    assert (counts.sum(axis=1) == 30).all()
    draws = weighted_statistics(x, y, counts, within=4)
    for b in range(40):
        rows = np.repeat(np.arange(30), counts[b].astype(int))
        plain = pair_statistics(x[rows], y[rows], within=4)
        for name in STATISTICS:
            assert draws[name][b] == pytest.approx(plain[name], abs=1e-9, nan_ok=True), name
    humans = np.vstack([x, y, scores(6, n=30)[0]])
    rows = np.repeat(np.arange(30), counts[0].astype(int))
    assert weighted_alpha(humans, counts[:1])[0] == pytest.approx(
        krippendorff_alpha(humans[:, rows]), abs=1e-9
    )


def test_bootstrap_intervals_contain_the_estimate_and_are_reproducible():
    x, y = scores(7, n=80)
    first = weighted_statistics(x, y, resample_counts(80, 1000, seed=11), within=5)
    again = weighted_statistics(x, y, resample_counts(80, 1000, seed=11), within=5)
    other = weighted_statistics(x, y, resample_counts(80, 1000, seed=12), within=5)
    point = pair_statistics(x, y, within=5)
    for name in STATISTICS:
        low, high = percentile_interval(first[name])
        assert low <= point[name] <= high, name
        assert (low, high) == percentile_interval(again[name])
        assert not np.array_equal(first[name], other[name])
    assert all(math.isnan(v) for v in percentile_interval(np.array([NAN, NAN])))


# --- the report -------------------------------------------------------------------------------


def ratings(n: int = 40, raters: str = "abc", noise: float = 4.0, judge_noise: float = 4.0):
    rng = np.random.default_rng(21)
    truth = rng.uniform(30, 95, n)
    judge = {f"item-{i}": float(np.round(truth[i] + rng.normal(0, judge_noise))) for i in range(n)}
    rows = [
        (f"item-{i}", r, float(np.round(truth[i] + rng.normal(0, noise))))
        for r in raters
        for i in range(n)
        if not (r == "c" and i % 4 == 0)  # rater c skipped some items
    ]
    return judge, rows


def test_report_judge_vs_humans_ceiling_and_length():
    judge, rows = ratings()
    judge["judged-only"] = 50.0
    rows.append(("rated-only", "a", 60.0))
    lengths = {item: 100 + int(score) * 10 for item, score in judge.items()}
    report = agreement_report(judge, rows, lengths, AgreementSettings(n_boot=300, seed=1))
    json.dumps(report, allow_nan=False)
    assert (report["n_items"], report["n_raters"], report["rater_pairs"]) == (40, 3, 3)
    assert (report["judge_only"], report["human_only"]) == (1, 1)
    assert report["n_ratings"] == 110
    items = sorted(i for i in judge if i != "judged-only")
    human_mean = [np.mean([s for i2, _, s in rows if i2 == i]) for i in items]
    expected = stats.pearsonr([judge[i] for i in items], human_mean).statistic
    block = report["judge_vs_human_mean"]
    assert block["pearson"]["value"] == pytest.approx(expected, abs=1e-6)
    for name in STATISTICS:
        for part in ("judge_vs_human_mean", "judge_vs_raters", "human_ceiling"):
            entry = report[part][name]
            assert entry["ci"][0] <= entry["value"] <= entry["ci"][1], (part, name)
    per_rater = [
        pearson(
            [judge[i] for i in items],
            [next((s for i2, r2, s in rows if i2 == i and r2 == r), NAN) for i in items],
        )
        for r in "abc"
    ]
    assert report["judge_vs_raters"]["pearson"]["value"] == pytest.approx(
        np.mean(per_rater), abs=1e-6
    )
    assert report["alpha_all_humans"]["value"] > 0.8
    assert report["length_bias"]["n"] == 41
    assert report["length_bias"]["judge_pearson"] == pytest.approx(1.0, abs=1e-6)
    assert report["below_threshold"] is False and report["warning"] is None
    assert len(report["points"]) == 40
    again = agreement_report(judge, rows, lengths, AgreementSettings(n_boot=300, seed=1))
    assert again == report


def test_report_warns_below_the_threshold_and_has_no_ceiling_with_one_rater():
    judge, rows = ratings(raters="a", judge_noise=40.0)
    report = agreement_report(judge, rows, settings=AgreementSettings(n_boot=0))
    assert report["human_ceiling"] is None and report["alpha_all_humans"] is None
    assert report["length_bias"] is None
    assert report["judge_vs_human_mean"]["pearson"]["ci"] == [None, None]
    assert report["below_threshold"] is True
    assert "below 0.87" in report["warning"]
    r = report["judge_vs_human_mean"]["pearson"]["value"]
    closer = AgreementSettings(n_boot=0, threshold=r - 0.01)
    assert agreement_report(judge, rows, settings=closer)["warning"] is None


def test_report_needs_common_items():
    with pytest.raises(Exception, match="only 0 item"):
        agreement_report({"1": 50.0}, [("one", "a", 50.0)])


# --- files ------------------------------------------------------------------------------------


def test_read_human_scores(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes("\ufeffid,rater,score,note\nq1,Ann,80,x\nq1,Bo,,\nq2,Ann,72.5,\n".encode())
    assert read_human_scores(path) == [("q1", "Ann", 80.0), ("q2", "Ann", 72.5)]


@pytest.mark.parametrize(
    ("content", "line", "field", "words"),
    [
        ("item_id,rater\nq1,a\n", 1, None, ["missing column score"]),
        ("item_id,rater,score\nq1,a,80\nq2,a,eighty\n", 3, "score", ["not a number: 'eighty'"]),
        ("item_id,rater,score\nq1,a,nan\n", 2, "score", ["not a number"]),
        ("", 1, None, ["empty"]),
        ("item_id,rater,score\n", 2, None, ["no ratings"]),
        ("item_id,rater,score\nq1,a,1\nq1,a,2\n", 3, "score", ["twice", "first at line 2"]),
        ("item_id,rater,score\nq1,,1\n", 2, "rater", ["empty rater"]),
    ],
)
def test_malformed_human_scores(tmp_path, content, line, field, words):
    path = tmp_path / "h.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_human_scores(path)
    assert (caught.value.line, caught.value.field) == (line, field)
    for word in words:
        assert word in str(caught.value)


def score_line(model: str, item: str, total: float | None, chars: int | None = None) -> str:
    details: dict = {}
    scores_: dict = {}
    if total is not None:
        scores_["judge_total"] = total
        details["judge"] = {
            "rubric": "text-writing",
            "rubric_hash": "ab" * 32,
            "dimensions": {},
            "total": total,
        }
    if chars is not None:
        details["answer_chars"] = chars
    record = {
        "model": model,
        "item_id": item,
        "task": "TW",
        "scores": scores_,
        "details": details,
    }
    return json.dumps(record) + "\n"


def make_run(path: Path, models: dict[str, dict[str, float]]) -> Path:
    path.mkdir()
    manifest = EvalManifest(run_id=path.name, command=[], seed=0, models=list(models))
    (path / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    lines = [
        score_line(model, item, total, chars=200 + 3 * int(total))
        for model, totals in models.items()
        for item, total in totals.items()
    ]
    lines.append(score_line(next(iter(models)), "not-judged", None))
    (path / "scores.jsonl").write_text("".join(lines), encoding="utf-8")
    return path


def test_judge_scores_from_a_run(tmp_path):
    run = make_run(tmp_path / "run", {"m1": {"a": 70.0, "b": 80.0}, "m2": {"a": 60.0}})
    with pytest.raises(RunError, match=r"several models \(m1, m2\); choose one with --model"):
        judge_scores(run)
    with pytest.raises(RunError, match="no judge scores for model 'm3'"):
        judge_scores(run, "m3")
    m1 = judge_scores(run, "m1")
    assert m1.scores == {"a": 70.0, "b": 80.0}
    assert m1.lengths == {"a": 410, "b": 440}
    assert m1.rubrics == {"text-writing": "ab" * 32}
    single = make_run(tmp_path / "single", {"only": {"x": 1.0}})
    assert judge_scores(single).model == "only"
    with pytest.raises(RunError, match="no scores.jsonl"):
        judge_scores(tmp_path)


# --- command line -----------------------------------------------------------------------------


def gramagents(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gramagents", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_humans(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    path.write_text(
        "item_id,rater,score\n" + "".join(f"{i},{r},{s:g}\n" for i, r, s in rows),
        encoding="utf-8",
    )
    return path


def test_agree_end_to_end(tmp_path):
    judge, rows = ratings(n=30, raters="ab")
    run = make_run(tmp_path / "run", {"m1": judge})
    humans = write_humans(tmp_path / "humans.csv", rows)
    result = gramagents("agree", str(run), "--human", str(humans), "--boot", "200", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "model: m1" in out
    assert "items: 30 (raters: 2" in out
    assert "Pearson r: " in out and "human ceiling" in out
    assert "warning" not in out
    report = json.loads((run / "agreement.json").read_text(encoding="utf-8"))
    assert report["model"] == "m1"
    assert report["rubrics"] == {"text-writing": "ab" * 32}
    assert report["settings"]["n_boot"] == 200
    markdown = (run / "agreement.md").read_text(encoding="utf-8")
    assert "| Pearson r |" in markdown and "agreement.svg" in markdown
    svg = (run / "agreement.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and svg.count("<circle") == 30
    ElementTree.fromstring(svg)  # well-formed
    assert "item-3: judge" in svg
    assert "wrote " in out and "agreement.svg" in out

    noisy = {item: (score * 37) % 100 for item, score in judge.items()}
    low = make_run(tmp_path / "low", {"m1": noisy})
    result = gramagents("agree", str(low), "--human", str(humans), "--boot", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    warning = [line for line in result.stdout.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "below 0.87" in warning[0]


def test_agree_bad_inputs_are_one_line_and_exit_2(tmp_path):
    judge, rows = ratings(n=10, raters="a")
    run = make_run(tmp_path / "run", {"m1": judge, "m2": judge})
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,rater,score\nitem-1,a,80\nitem-2,a,high\n", encoding="utf-8")
    cases = [
        (["--human", str(bad), "--model", "m1"], [f"{bad}:3:", "field 'score'", "'high'"]),
        (["--human", str(tmp_path / "none.csv")], ["none.csv", "file not found"]),
        (["--human", str(write_humans(tmp_path / "ok.csv", rows))], ["several models"]),
    ]
    for args, words in cases:
        result = gramagents("agree", str(run), *args, cwd=tmp_path)
        assert result.returncode == 2, result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        for word in words:
            assert word in lines[0]
        assert not (run / "agreement.json").exists()
