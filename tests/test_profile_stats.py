"""The profile's statistics on models whose behaviour is planted item by item."""

from __future__ import annotations

import numpy as np
import pytest

from gramagents.profiles import stats as stats_module
from gramagents.profiles.compute import Settings, competences, paired, weakest_points
from gramagents.profiles.scores import ItemScore, share
from gramagents.profiles.stats import (
    chance_corrected,
    corrected_estimate,
    holm,
    holm_adjusted,
    mean_estimate,
    paired_difference,
)

SETTINGS = Settings(boot=1000, seed=7)
COMPETENCE_OF = {
    "SINGLE-T": "recognition",
    "SINGLE-F": "recognition",
    "SIM-GRA": "discrimination",
    "CLIMP": "acceptability",
}
RANDOM = {"SINGLE-T": 0.5, "SINGLE-F": 0.5, "SIM-GRA": 0.25, "CLIMP": 0.5}


def _rows(model: str, right: dict[str, object], n: int = 400, seed: int = 0) -> list[ItemScore]:
    """`n` items per task; per task the model is right on all (`True`), none (`False`), or
    guesses uniformly among 1/RANDOM answers (`"chance"`)."""
    rng = np.random.default_rng(seed)
    rows = []
    for task, random in RANDOM.items():
        behaviour = right[task]
        for i in range(n):
            if behaviour == "chance":
                score = float(rng.integers(round(1 / random)) == 0)
            else:
                score = float(bool(behaviour))
            rows.append(
                ItemScore(
                    "set",
                    model,
                    f"{task}-{i}",
                    task,
                    score,
                    random,
                    False,
                    f"set:p{i % 20}",
                    "A",
                    "A",
                )
            )
    return rows


def test_right_on_one_competence_and_at_chance_elsewhere_scores_one_and_about_zero():
    behaviour = {"SINGLE-T": True, "SINGLE-F": True, "SIM-GRA": "chance", "CLIMP": "chance"}
    result = competences(
        _rows("m", behaviour), COMPETENCE_OF, list(dict.fromkeys(COMPETENCE_OF.values())), SETTINGS
    )["m"]
    recognition = result["recognition"]["corrected"]
    assert recognition == {"value": 1.0, "low": 1.0, "high": 1.0}
    for name in ("discrimination", "acceptability"):
        estimate = result[name]["corrected"]
        assert abs(estimate["value"]) < 0.1, name
        assert estimate["low"] < 0 < estimate["high"], name  # chance lies inside the interval
    assert result["recognition"]["tasks"]["SINGLE-T"]["n"] == 400


def test_chance_correction_is_zero_at_random_and_negative_below():
    assert chance_corrected(np.array([0.25] * 8), np.array([0.25] * 8)) == 0.0
    assert chance_corrected(np.zeros(4), np.full(4, 0.5)) == -1.0
    assert chance_corrected(np.array([1.0, 0.0]), np.array([0.0, 0.0])) == 0.5


def test_a_planted_ten_point_difference_on_500_items_is_significant():
    rng = np.random.default_rng(3)
    b = (rng.random(500) < 0.6).astype(float)
    a = b.copy()
    wrong = np.flatnonzero(a == 0)
    a[rng.choice(wrong, 50, replace=False)] = 1.0  # A is right on 50 more items: +10 points
    test = paired_difference(a, b, boot=1000, seed=1)
    assert test.difference.value == pytest.approx(0.10)
    assert test.difference.low > 0.0
    assert (test.a_only, test.b_only) == (50, 0)
    assert test.p is not None and test.p < 1e-6


def test_a_model_against_itself_shows_no_difference():
    scores = (np.random.default_rng(4).random(500) < 0.5).astype(float)
    test = paired_difference(scores, scores.copy(), boot=1000, seed=1)
    assert test.difference.value == 0.0
    assert test.difference.low == test.difference.high == 0.0
    assert test.p == 1.0


def test_holm_corrects_the_p_values_of_a_comparison_together():
    rng = np.random.default_rng(5)
    tests = []
    for shift in (50, 5, 0):
        b = np.zeros(500)
        a = b.copy()
        a[rng.choice(500, shift, replace=False)] = 1.0
        tests.append(paired_difference(a, b, boot=0, seed=1))
    corrected = holm(tests)
    ps = [t.p for t in tests]
    assert [t.p_holm for t in corrected] == pytest.approx(
        [min(1, 3 * ps[0]), min(1, 2 * ps[1]), 1.0]
    )


def test_holm_steps_down_keeping_the_adjusted_values_in_order_of_the_raw_ones():
    # sorted: 0.01 x 3 = 0.03; 0.012 x 2 = 0.024, raised to 0.03; 0.04 x 1; 0.5 x 3 capped at 1
    assert holm_adjusted([0.04, 0.012, 0.01]) == pytest.approx([0.04, 0.03, 0.03])
    assert holm_adjusted([0.5, 0.6]) == [1.0, 1.0]
    assert holm_adjusted([]) == []


def test_paired_comparison_of_two_scripted_models_per_task_and_competence():
    better = _rows("better", {"SINGLE-T": True, "SINGLE-F": True, "SIM-GRA": True, "CLIMP": True})
    chance = _rows(
        "chance",
        {"SINGLE-T": "chance", "SINGLE-F": "chance", "SIM-GRA": "chance", "CLIMP": "chance"},
    )
    same = [
        ItemScore(r.entry, "chance-again", r.item_id, r.task, r.score, r.random, r.invalid, r.point)
        for r in chance
    ]
    pairs = {(p["a"], p["b"]): p for p in paired(better + chance + same, COMPETENCE_OF, SETTINGS)}
    rows = {(r["kind"], r["name"]): r for r in pairs["better", "chance"]["rows"]}
    assert set(rows) == {("task", t) for t in RANDOM} | {
        ("competence", c) for c in set(COMPETENCE_OF.values())
    }
    assert all(r["p_holm"] < 0.001 and r["difference"]["low"] > 0 for r in rows.values())
    alike = pairs["chance", "chance-again"]["rows"]
    assert all(r["p"] == 1.0 and r["difference"]["value"] == 0.0 for r in alike)


def test_the_weakest_points_list_ranks_a_planted_weak_point_first():
    rows = _rows("m", {"SINGLE-T": "chance", "SINGLE-F": True, "SIM-GRA": True, "CLIMP": True})
    planted = [
        ItemScore(
            r.entry, r.model, r.item_id, r.task, 0.0, r.random, r.invalid, "set:weak", "B", "A"
        )
        for r in rows[:12]
    ]
    rest = rows[12:]
    weakest = weakest_points(planted + rest, SETTINGS)["m"]
    assert weakest[0]["point"] == "set:weak"
    assert weakest[0]["corrected"] == -1.0
    assert weakest[0]["examples"][0]["answer"] == "B"
    assert len(weakest) == SETTINGS.weakest


def test_points_with_too_few_items_are_not_ranked():
    rows = [
        ItemScore("set", "m", str(i), "SINGLE-T", 0.0, 0.5, False, "set:rare") for i in range(2)
    ]
    assert weakest_points(rows, SETTINGS) == {"m": []}


@pytest.mark.parametrize(
    ("task", "scores", "expected"),
    [
        ("SINGLE-T", {"acc": 1.0}, 1.0),
        ("EDU-QG", {"judge_pct": 75.0, "judge_total": 3}, 0.75),
        ("GEC-GUIDED", {"f0.5": 0.4}, 0.4),
        ("SINGLE-T", {}, None),
    ],
)
def test_every_headline_is_read_as_a_share(task, scores, expected):
    assert share(task, scores) == expected


def test_a_bootstrap_in_batches_draws_the_interval_of_one_call(monkeypatch: pytest.MonkeyPatch):
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 2, 101).astype(float)
    baselines = np.full(101, 0.5)
    whole = corrected_estimate(scores, baselines, boot=997, seed=5), mean_estimate(scores, 997, 5)
    monkeypatch.setattr(stats_module, "RESAMPLE_CELLS", 7 * 101 + 3)  # batches of 7, then 3
    batched = corrected_estimate(scores, baselines, boot=997, seed=5), mean_estimate(scores, 997, 5)
    assert batched == whole
    assert whole[0].low is not None and whole[0].low < whole[0].value < whole[0].high
