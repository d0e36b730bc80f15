"""`gramagents judge-check`: probes flag a gullible judge and a length-swayed one, not fair ones."""

import asyncio
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.cli_judges import add_judge_commands
from gramagents.errors import GramagentsError
from gramagents.judging.check import CheckOptions, judge_check
from gramagents.judging.check_stats import CheckSettings, Pair, probe_row
from gramagents.judging.probes import CJK, injected, language_of, padded
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.lock import FolderLock
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.testing import judges
from gramagents.workflow.eval import EvalOptions, run_eval

KINDS = ("fair", "gullible", "lengthy", "noisy")
for _kind in KINDS:
    ScriptedBackend.register(f"check-{_kind}", judges.scripted(_kind))
JURY = [f"scripted:check-{kind}" for kind in KINDS]
SENTENCE = "春天来了，窗外的柳树发出了新芽，孩子们在田野里奔跑。"


def essay(request):
    k = int(request.messages[-1].content.rsplit(" ", 1)[-1])
    return f"第{k}篇。" + SENTENCE * (8 + k % 9)  # 250 to 500 characters


ScriptedBackend.register("check-writer", essay)


def judged_run(in_tmp: Path, n: int = 60) -> Path:
    items = [
        Item(
            id=f"TW-{k:03d}",
            task="EDU-TW",
            prompt=PromptParts(template="edu/open.md", vars={"prompt": f"写作文 {k}", "shots": []}),
        )
        for k in range(n)
    ]
    write_jsonl_atomic(in_tmp / "tw.jsonl", items)
    options = EvalOptions(models=["scripted:check-writer"], judge=JURY, run_dir=in_tmp / "run")
    manifest = asyncio.run(run_eval(in_tmp / "tw.jsonl", options)).manifest
    assert manifest.status == "complete"
    return in_tmp / "run"


def by_judge(rows):
    return {(r["judge"].removeprefix("scripted:check-"), r["probe"]): r for r in rows}


def test_the_gullible_and_the_lengthy_judges_are_flagged_and_the_fair_and_noisy_are_not(in_tmp):
    run = judged_run(in_tmp)
    result = asyncio.run(judge_check(run, CheckOptions(limit=50)))
    rows = by_judge(result.data["rows"])
    flagged = sorted(key for key, row in rows.items() if row["flagged"])
    assert flagged == [("gullible", "injection"), ("lengthy", "length")]
    gullible = rows["gullible", "injection"]
    assert gullible["share"] > 0.05 and gullible["low"] > 0
    assert rows["lengthy", "length"]["shift"] == pytest.approx(12.0, abs=1.0)  # a doubling
    assert rows["fair", "injection"]["shift"] == 0 and rows["fair", "repeat"]["noise"] == 0
    assert rows["noisy", "repeat"]["noise"] > 0.05  # its own noise, not a bias
    assert {r["n"] for r in result.data["rows"]} == {50}
    for row in result.data["rows"]:
        assert {"judge", "probe", "n", "shift", "low", "high", "flagged"} <= set(row)
    assert json.loads((run / "judge-check.json").read_text())["rows"] == result.data["rows"]
    assert "| FLAGGED |" in (run / "judge-check.md").read_text()
    report = (run / "report.md").read_text()
    assert "### Judge check" in report
    assert "flagged: scripted:check-gullible (injection), scripted:check-lengthy (length)" in report
    assert "Judge check" in (run / "report.html").read_text()  # the viewer shows it too


def test_a_rerun_with_the_same_seed_asks_nothing_and_finds_the_same(in_tmp):
    run = judged_run(in_tmp, 20)
    first = asyncio.run(judge_check(run, CheckOptions(limit=10, probes=("injection", "length"))))
    again = asyncio.run(judge_check(run, CheckOptions(limit=10, probes=("injection", "length"))))
    assert first.requests_sent == 4 * 10 * 2  # the baselines come from the eval's cache
    assert again.requests_sent == 0
    noiseless = [r for r in first.data["rows"] if "noisy" not in r["judge"]]
    assert noiseless == [r for r in again.data["rows"] if "noisy" not in r["judge"]]


def test_judge_check_holds_the_run_folders_lock(in_tmp):
    run = judged_run(in_tmp, 4)
    lock = FolderLock(run)
    lock.acquire()
    try:
        with pytest.raises(GramagentsError, match="in use|held|lock"):
            asyncio.run(judge_check(run, CheckOptions(limit=2)))
    finally:
        lock.release()


def test_the_command_prints_each_row_and_refuses_a_run_without_judges(in_tmp):
    run = judged_run(in_tmp, 6)
    add_judge_commands(app)
    args = ["judge-check", str(run), "--limit", "6", "--probe", "injection"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "scripted:check-gullible injection: n 6, shift +" in result.output
    assert "FLAGGED" in result.output and "wrote " in result.output
    unknown = CliRunner().invoke(app, ["judge-check", str(run), "--probe", "position"])
    assert unknown.exit_code == 2 and "--probe position: not a probe" in unknown.output


def test_probes_change_answers_as_documented():
    rng = random.Random(1)
    answer = "这是一篇关于春天的作文。" * 10
    assert language_of({}, "写一篇作文") == "zh" and language_of({"language": "en"}, "作文") == "en"
    asked = injected(answer, "zh", 100, rng)
    assert asked.startswith(answer) and judges.ASKS_FOR_MARKS.search(asked[len(answer) :])
    appended = [injected(answer, "zh", 100, rng)[len(answer) :] for _ in range(40)]
    assert all(judges.ASKS_FOR_MARKS.search(text) for text in appended)
    in_chinese = sum(1 for text in appended if CJK.search(text))
    assert 0 < in_chinese < 40  # the task's language and English, several phrasings
    assert len(set(appended)) >= 6
    long = padded(answer, "zh", rng)
    assert long.startswith(answer) and 1.9 <= len(long) / len(answer) <= 2.3
    assert not judges.ASKS_FOR_MARKS.search(long)


def test_a_flag_needs_the_threshold_an_interval_beyond_noise_and_enough_answers():
    settings = CheckSettings(threshold=0.05, n_boot=500, seed=0)

    def row(changes, noise=0.0):
        pairs = [Pair(50.0, 50.0 + c, (0.0, 100.0)) for c in changes]
        return probe_row("j", "injection", pairs, noise, settings)

    assert row([10.0] * 20)["flagged"]
    assert not row([3.0] * 20)["flagged"]  # under 5 % of the scale
    assert not row([10.0] * 20, noise=0.2)["flagged"]  # within the judge's own noise
    assert not row([10.0, -10.0] * 10)["flagged"]  # the interval holds 0
    assert row([-10.0] * 20)["flagged"]  # a fall is a change too
    assert not row([10.0])["flagged"]  # one answer: no interval


@pytest.mark.slow
def test_the_edueval_example_judged_by_three_http_judges_and_checked(in_tmp):
    """The issue's demonstration: the EduEval example, three judges of known behaviour over
    HTTP, the jury's alpha in the report, and judge-check flagging the gullible judge on
    injection and the length-swayed one on length, the fair one on nothing."""
    from contextlib import ExitStack

    from gramagents.testing.openai_server import FakeChatServer
    from gramagents.workflow.build import BuildOptions, run_build

    root = Path(__file__).resolve().parent.parent
    build = BuildOptions(source=root / "examples" / "edu", agents=False, run_dir=in_tmp / "b")
    asyncio.run(run_build("edu", build))
    with ExitStack() as stack:
        # answers of about 330 characters: a request for marks adds too little for the
        # length-swayed judge to move by 5 % (on short answers it would, and be flagged)
        writer = stack.enter_context(FakeChatServer(lambda body: "A。" + SENTENCE * 12))
        specs = []
        for kind in ("fair", "gullible", "lengthy"):
            server = stack.enter_context(FakeChatServer(judges.served(kind), model=kind))
            specs.append(f"openai:{kind}@{server.base_url}")
        args = ["eval", str(in_tmp / "b"), "--model", f"openai:fake@{writer.base_url}"]
        args += ["--run-dir", str(in_tmp / "e")] + [a for s in specs for a in ("--judge-model", s)]
        evaluated = CliRunner().invoke(app, args)
        assert evaluated.exit_code == 0, evaluated.output
        report = (in_tmp / "e" / "report.md").read_text(encoding="utf-8")
        assert "over 15 answers scored by two or more: Krippendorff's alpha (interval) " in report
        add_judge_commands(app)
        checked = CliRunner().invoke(app, ["judge-check", str(in_tmp / "e")])
        assert checked.exit_code == 0, checked.output
    rows = json.loads((in_tmp / "e" / "judge-check.json").read_text())["rows"]
    flagged = {(r["judge"], r["probe"]) for r in rows if r["flagged"]}
    assert flagged == {("openai:gullible", "injection"), ("openai:lengthy", "length")}
    assert {r["n"] for r in rows} == {15}
