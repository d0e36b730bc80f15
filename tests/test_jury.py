"""A jury of judges: aggregates and agreement by hand, a judge failing, resume, self-judging."""

import asyncio
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import GramagentsError
from gramagents.judging.jury import aggregate
from gramagents.judging.jury_report import judges_section, jury_agreement
from gramagents.models import BackendSettings
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.rundir import iter_jsonl, write_jsonl_atomic
from gramagents.sources.datasets import open_dataset
from gramagents.workflow.eval import EvalOptions, run_eval
from gramagents.workflow.eval_jury import jury_specs, open_jury

TABLE = {  # each judge's total (text-writing rubric, 0-100) for answers 0..3
    "a": [60.0, 70.0, 80.0, 90.0],
    "b": [65.0, 70.0, 85.0, 80.0],
    "c": [50.0, 75.0, 80.0, 100.0],
}
CALLS: Counter = Counter()
"""(judge, answer) -> how often the judge was asked about it."""
BROKEN: dict[str, dict[int, str]] = {}
"""judge -> answer -> how it fails there (`invalid` or `down`)."""
WRITER_DOWN: set[int] = set()


def number_of(text: str) -> int:
    return int(re.findall(r"短文 (\d+)", text)[-1])


def table_judge(name):
    def respond(request):
        prompt = "\n".join(m.content for m in request.messages)  # re-asks come after it
        k = number_of(prompt)
        CALLS[name, k] += 1
        how = BROKEN.get(name, {}).get(k)
        if how == "down":
            raise ConnectionError("judge server down")
        if how == "invalid":
            return "I cannot grade this."
        dims = re.findall(r'^\s*("[^"]+"): <score from 0 to ([0-9.]+)>', prompt, re.M)
        share = TABLE[name][k] / 100
        scores = {json.loads(d): float(p) * share for d, p in dims}
        return json.dumps({**scores, "total": sum(scores.values()), "reason": f"{name} {k}"})

    return respond


def writer(request):
    k = number_of(request.messages[-1].content)
    if k in WRITER_DOWN:
        raise ConnectionError("model down")
    return f"这是短文 {k} 的内容。"


for _name in TABLE:
    ScriptedBackend.register(f"jury-{_name}", table_judge(_name))
ScriptedBackend.register("jury-writer", writer)
JUDGES = [f"scripted:jury-{name}" for name in TABLE]


@pytest.fixture(autouse=True)
def fresh_script():
    CALLS.clear()
    BROKEN.clear()
    WRITER_DOWN.clear()


def dataset(path: Path, n: int = 4) -> Path:
    items = [
        Item(
            id=f"TW-{k}",
            task="EDU-TW",
            prompt=PromptParts(
                template="edu/open.md",
                vars={"prompt": f"写一篇短文 {k}", "shots": [], "task_input": f"写一篇短文 {k}"},
            ),
        )
        for k in range(n)
    ]
    write_jsonl_atomic(path, items)
    return path


def evaluate(in_tmp: Path, run: str = "r", **options):
    options = {
        "models": ["scripted:jury-writer"],
        "judge": JUDGES,
        "run_dir": in_tmp / run,
        **options,
    }
    return asyncio.run(run_eval(dataset(in_tmp / "tw.jsonl"), EvalOptions(**options))).manifest


def scores(in_tmp: Path, run: str = "r") -> dict[str, dict]:
    return {r["item_id"]: r for r in iter_jsonl(in_tmp / run / "scores.jsonl")}


def hand_alpha(table: list[list[float]]) -> float:
    """Krippendorff's interval alpha written out: pairable values, observed and expected."""
    units = [[v for v in unit if v == v] for unit in zip(*table, strict=True)]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    observed = (
        sum(
            sum((a - b) ** 2 for a, b in itertools.permutations(u, 2)) / (len(u) - 1) for u in units
        )
        / n
    )
    expected = sum((a - b) ** 2 for a, b in itertools.permutations(values, 2)) / (n * (n - 1))
    return 1 - observed / expected


def test_aggregates_by_hand():
    assert aggregate([60, 80, 70], "median") == 70
    assert aggregate([60, 80], "median") == 70
    assert aggregate([60, 80, 70], "mean") == 70
    assert aggregate([60.2, 79.6, 80.4], "majority") == 80  # two say 80 once rounded
    assert aggregate([60, 80], "majority") == 60  # a tie: both as near the median, the lower
    assert aggregate([60, 80, 81], "majority") == 80  # no majority: the value nearest the median
    with pytest.raises(ValueError):
        aggregate([1.0], "mode")


@pytest.mark.parametrize("rule", ["median", "mean", "majority"])
def test_every_judge_judges_every_answer_and_the_score_is_their_aggregate(in_tmp, rule):
    manifest = evaluate(in_tmp, jury=rule)
    assert manifest.status == "complete"
    assert manifest.judge["models"] == JUDGES and manifest.judge["jury"] == rule
    assert manifest.judge["requests_sent"] == 12  # 3 judges x 4 answers
    assert {j: s["requests_sent"] for j, s in manifest.judge["judges"].items()} == dict.fromkeys(
        JUDGES, 4
    )
    recorded = scores(in_tmp)
    for k in range(4):
        totals = [TABLE[name][k] for name in TABLE]
        expected = {"median": sorted(totals)[1], "mean": sum(totals) / 3}.get(rule)
        if rule == "majority":
            expected = max(
                set(totals), key=lambda t: (totals.count(t), -abs(t - sorted(totals)[1]))
            )
        record = recorded[f"TW-{k}"]
        assert record["scores"]["judge_total"] == pytest.approx(expected)
        verdicts = record["details"]["judge"]["verdicts"]
        assert [(v["judge"], v["total"]) for v in verdicts] == [
            (f"scripted:jury-{name}", pytest.approx(TABLE[name][k])) for name in TABLE
        ]
        assert record["details"]["judge"]["left_out"] == []


def test_the_jurys_alpha_and_kappas_equal_the_hand_computation(in_tmp):
    evaluate(in_tmp)
    table = [TABLE[name] for name in TABLE]
    found = jury_agreement(np.array(table), JUDGES)
    assert found["alpha"] == pytest.approx(hand_alpha(table), abs=1e-12)
    from sklearn.metrics import cohen_kappa_score

    ab = next(p for p in found["pairs"] if p["judges"] == (JUDGES[0], JUDGES[1]))
    assert ab["qwk"] == pytest.approx(
        cohen_kappa_score(table[0], table[1], weights="quadratic"), abs=1e-12
    )
    report = (in_tmp / "r" / "report.md").read_text(encoding="utf-8")
    assert f"Krippendorff's alpha (interval) {hand_alpha(table):.3f} [" in report
    assert "## Judges" in report and "jury-review.jsonl" in report
    review = list(iter_jsonl(in_tmp / "r" / "jury-review.jsonl"))
    spreads = [max(TABLE[n][k] for n in TABLE) - min(TABLE[n][k] for n in TABLE) for k in range(4)]
    assert [r["item_id"] for r in review] == [
        "TW-3",
        "TW-0",
        "TW-1",
        "TW-2",
    ]  # widest first, ties by id
    assert [r["spread"] for r in review] == sorted(spreads, reverse=True)
    assert review[0]["answer"] == "这是短文 3 的内容。"


def test_a_judge_failing_on_an_answer_leaves_the_others_aggregate(in_tmp):
    BROKEN["c"] = {1: "invalid", 2: "down"}
    manifest = evaluate(in_tmp)
    assert manifest.status == "complete"  # the others judged: every answer has its score
    recorded = scores(in_tmp)
    assert recorded["TW-1"]["scores"]["judge_total"] == 70.0  # median of a and b: 70, 70
    assert recorded["TW-2"]["scores"]["judge_total"] == 82.5  # median of a and b: 80, 85
    assert recorded["TW-0"]["scores"]["judge_total"] == 60.0  # all three: 60, 65, 50
    for k, unreachable in ((1, False), (2, True)):
        judge = recorded[f"TW-{k}"]["details"]["judge"]
        assert judge["left_out"] == ["scripted:jury-c"]
        left = judge["verdicts"][2]
        assert left["judge"] == "scripted:jury-c" and "total" not in left
        assert left["error"] and left["unreachable"] is unreachable
        assert not recorded[f"TW-{k}"]["invalid"]
    report = (in_tmp / "r" / "report.md").read_text(encoding="utf-8")
    assert "| scripted:jury-c | 6 | 0 | – | 2 |" in report  # two re-asks; left out of two


def test_an_answer_no_judge_could_be_reached_for_waits_for_the_resume(in_tmp):
    for name in TABLE:
        BROKEN[name] = {3: "down"}
    assert evaluate(in_tmp).status == "partial"
    BROKEN.clear()
    CALLS.clear()
    assert evaluate(in_tmp).status == "complete"
    assert CALLS == Counter({(name, 3): 1 for name in TABLE})  # each judge once, on answer 3


def test_a_resume_asks_no_judge_twice(in_tmp):
    WRITER_DOWN.add(2)
    first = evaluate(in_tmp)
    assert first.status == "partial"
    assert set(CALLS) == {(name, k) for name in TABLE for k in (0, 1, 3)}
    CALLS.clear()
    WRITER_DOWN.clear()
    resumed = evaluate(in_tmp)
    assert resumed.status == "complete"
    assert CALLS == Counter({(name, 2): 1 for name in TABLE})  # only the new answer, once each
    # a judge joins: with --resume-changed=reask every answer is judged again, but only the new
    # judge is asked; the others' verdicts come from the cache, key by key
    ScriptedBackend.register("jury-d", table_judge("a"))
    CALLS.clear()
    joined = evaluate(in_tmp, judge=[*JUDGES, "scripted:jury-d"], resume_changed="reask")
    assert joined.status == "complete"
    assert set(CALLS) == {("a", k) for k in range(4)}  # the `d` script answers as `a` does
    assert joined.judge["judges"]["scripted:jury-a"]["requests_sent"] == 0
    assert joined.judge["judges"]["scripted:jury-d"]["requests_sent"] == 4


def test_one_judge_records_its_verdict_as_before(in_tmp):
    evaluate(in_tmp, judge="scripted:jury-a")
    judge = scores(in_tmp)["TW-0"]["details"]["judge"]
    assert "verdicts" not in judge and judge["judge"] == "scripted:jury-a"
    assert judge["total"] == 60.0


def test_a_named_judge_that_is_the_model_under_test_is_refused_unless_allowed(in_tmp):
    with pytest.raises(GramagentsError, match="also a model under test.*--allow-self-judge"):
        evaluate(in_tmp, judge=["scripted:jury-writer", "scripted:jury-a"])
    assert not (in_tmp / "r").exists()
    ScriptedBackend.register("self-judging-writer", table_judge("a"))  # a judge that also writes
    manifest = evaluate(
        in_tmp,
        models=["scripted:self-judging-writer"],
        judge=["scripted:self-judging-writer", "scripted:jury-b"],
        allow_self_judge=True,
    )
    assert manifest.judge["self_judged"] == [
        {"model": "scripted:self-judging-writer", "judge": "scripted:self-judging-writer"}
    ]
    report = (in_tmp / "r" / "report.md").read_text(encoding="utf-8")
    assert "**Self-judged:** scripted:self-judging-writer grades its own answers" in report


def test_the_default_judge_grading_the_default_model_is_allowed_and_flagged(in_tmp):
    data = open_dataset(dataset(in_tmp / "tw.jsonl"))
    assert jury_specs(None, data) == (["smollm2"], False)
    assert jury_specs("smollm2", data) == (["smollm2"], False)  # spelled out: still the default
    assert jury_specs(["smollm2", "openai:j"], data) == (["smollm2", "openai:j"], True)
    from gramagents.models import create_backend

    models = [create_backend("scripted:jury-writer", BackendSettings())]
    jury = open_jury(["scripted:jury-writer"], False, "median", models, BackendSettings())
    assert jury.self_judged == [{"model": "scripted:jury-writer", "judge": "scripted:jury-writer"}]
    with pytest.raises(GramagentsError, match="--allow-self-judge"):
        open_jury(["scripted:jury-writer"], True, "median", models, BackendSettings())


def test_the_command_line_takes_several_judges_and_a_rule(in_tmp):
    data = dataset(in_tmp / "tw.jsonl")
    args = ["eval", str(data), "--model", "scripted:jury-writer", "--run-dir", "cli"]
    args += [a for j in JUDGES for a in ("--judge-model", j)] + ["--jury", "mean"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "(12 by the judges)" in result.output
    manifest = json.loads((in_tmp / "cli" / "manifest.json").read_text())
    assert manifest["judge"]["models"] == JUDGES and manifest["judge"]["jury"] == "mean"
    bad = CliRunner().invoke(app, [*args[:-1], "mode", "--run-dir", "bad"])
    assert bad.exit_code == 2 and "--jury mode: not a rule" in bad.output


def test_the_judges_section_of_a_run_judged_by_one(in_tmp):
    evaluate(in_tmp, judge="scripted:jury-a")
    from gramagents.runtime.run import read_manifest

    lines = judges_section(in_tmp / "r", read_manifest(in_tmp / "r"))
    assert lines[:3] == ["## Judges", "", "Judged by scripted:jury-a."]
    assert not (in_tmp / "r" / "jury-review.jsonl").exists()


def test_the_report_flags_the_default_judge_grading_the_default_model(tmp_path):
    from gramagents.records import EvalManifest

    pair = {"model": "smollm2", "judge": "smollm2"}
    block = {"model": "smollm2", "models": ["smollm2"], "named": False, "self_judged": [pair]}
    lines = judges_section(tmp_path, EvalManifest(run_id="r", command=[], seed=0, judge=block))
    flagged = next(line for line in lines if line.startswith("- **Self-judged:** smollm2"))
    assert "the default judge" in flagged and "smoke test" in flagged


def test_a_recipe_or_a_suite_names_the_jury_when_the_command_does_not(in_tmp):
    from gramagents.profiles.suite import load_suite
    from gramagents.sources.datasets import Dataset

    root = Path(__file__).resolve().parent.parent
    recipe = in_tmp / "edu-judged.yaml"
    text = (root / "graphs" / "edu.yaml").read_text(encoding="utf-8")
    recipe.write_text(
        text.replace("\nnodes:", "\njudges: [scripted:jury-a, scripted:jury-b]\nnodes:")
    )
    built = Dataset(path=in_tmp, items=[], digest="", info={"recipe": str(recipe)})
    assert jury_specs(None, built) == (["scripted:jury-a", "scripted:jury-b"], True)
    assert jury_specs(["scripted:jury-c"], built) == (["scripted:jury-c"], True)  # the command's
    unknown = Dataset(path=in_tmp, items=[], digest="", info={"recipe": "not-installed-here"})
    assert jury_specs(None, unknown) == (["smollm2"], False)
    suite = in_tmp / "s.yaml"
    suite.write_text(
        "suite: s\nentries:\n  e: {dataset: {path: x.jsonl}}\ncompetences:\n  c: [EDU-TW]\n"
        "judges: [scripted:jury-a]\n"
    )
    assert load_suite(str(suite))[0].judges == ["scripted:jury-a"]
