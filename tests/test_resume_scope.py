"""Resumes that refuse what they cannot honour: another sample, another suite, a failed profile.

Before, `eval --limit 3` then `eval --limit 1` on one folder gave a summary counting 3 items
per task under a manifest saying limit 1; a profile resumed after its suite's limit fell pooled
the answers of the larger sample; a profile resumed with another suite file was accepted with
no `changes` entry; `profile` did not take the `--resume-changed` its own errors suggest; and a
profile that failed left `report.md` titled "(running)".
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import GramagentsError, RunError
from gramagents.profiles.compute import Settings
from gramagents.profiles.run import ProfileOptions, ProfileResult, run_profile
from gramagents.runtime.run import read_manifest

from .test_profile import ASKED  # noqa: F401 - registers the scripted models it names
from .test_run_folder import evaluate, lines, two_template_dataset


def summary_n(run: Path) -> int:
    return sum(row["n"] for row in json.loads((run / "summary.json").read_text()))


# --- eval -----------------------------------------------------------------------------------------


def test_an_eval_resumed_with_another_limit_is_refused_in_one_line(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run, limit=3)
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    with pytest.raises(RunError) as caught:
        evaluate(dataset, run, limit=1)
    message = str(caught.value)
    assert message.startswith(
        f"{run}: changed since its records were made: sample (--limit 3 --seed 1234 -> "
        "--limit 1 --seed 1234) (2 answers made under the earlier inputs); re-run with "
        "--resume-changed=reask"
    )
    assert "--run-dir to start afresh" in message and "\n" not in message
    after = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    assert {k: v for k, v in after.items() if not k.startswith(".lock")} == {
        k: v for k, v in before.items() if not k.startswith(".lock")
    }
    with pytest.raises(RunError, match=r"sample \(--limit 3 --seed 1234 -> --limit 3 --seed 7\)"):
        evaluate(dataset, run, limit=3, seed=7)
    result = CliRunner().invoke(
        app, ["eval", str(dataset), "--model", "scripted:asked", "--run-dir", str(run)]
    )  # every item: the three answered are in the new sample, so nothing is mixed
    assert result.exit_code == 0, result.output
    manifest = read_manifest(run)
    assert manifest.tasks == {"SINGLE-T": 10} and summary_n(run) == 10
    assert [(c.input, c.before, c.after) for c in manifest.changes] == [
        ("sample", "--limit 3 --seed 1234", "every item (no --limit)")
    ]


def test_an_eval_resumed_with_another_limit_and_reask_counts_only_its_sample(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run, limit=3)
    manifest = evaluate(dataset, run, limit=1, resume_changed="reask")
    assert manifest.tasks == {"SINGLE-T": 1} and manifest.dataset["sample"]["limit"] == 1
    assert summary_n(run) == 1 and len(lines(run / "scores.jsonl")) == 1
    assert manifest.set_aside == 4  # the other two answers: response and score each
    assert [c.input for c in manifest.changes] == ["sample"]
    report = (run / "report.md").read_text()
    assert "- sampled: at most 1 question per task" in report and "; 1 answers," in report


# --- profile --------------------------------------------------------------------------------------


def suite_text(dataset: Path, limit: int, name: str = "scoped", entry: str = "pairs") -> str:
    return (
        f"suite: {name}\nentries:\n  {entry}:\n    dataset: {{path: {dataset}}}\n"
        f"    limit: {limit}\ncompetences:\n  holds: [SINGLE-T]\n"
    )


def profile(folder: Path, suite: Path, **options) -> ProfileResult:
    settings = Settings(boot=0, seed=1)
    given = {"models": ["scripted:says-true"], "settings": settings, "use_cache": False}
    return asyncio.run(
        run_profile(ProfileOptions(suite=str(suite), run_dir=folder, **{**given, **options}))
    )


def test_a_profile_resumed_after_its_suite_s_limit_fell_pools_only_the_new_sample(in_tmp):
    dataset = two_template_dataset(in_tmp)
    suite, folder = in_tmp / "suite.yaml", in_tmp / "profile"
    suite.write_text(suite_text(dataset, 5))
    assert profile(folder, suite).manifest.tasks == {"SINGLE-T": 5}
    suite.write_text(suite_text(dataset, 2))
    with pytest.raises(RunError) as caught:
        profile(folder, suite)
    assert str(caught.value).startswith(f"{folder}: changed since its records were made: suite")
    result = profile(folder, suite, resume_changed="reask")
    assert result.manifest.status == "complete" and result.manifest.tasks == {"SINGLE-T": 2}
    assert result.data["competences"]["scripted:says-true"]["holds"]["n"] == 2
    assert [c.input for c in result.manifest.changes] == ["suite"]
    entry = read_manifest(folder / "evals" / "pairs")
    assert entry.tasks == {"SINGLE-T": 2} and [c.input for c in entry.changes] == ["sample"]


def test_a_profile_resumed_with_another_limit_names_the_entry_and_the_option(in_tmp):
    dataset = two_template_dataset(in_tmp)
    suite, folder = in_tmp / "suite.yaml", in_tmp / "profile"
    suite.write_text(suite_text(dataset, 5))
    profile(folder, suite)
    with pytest.raises(RunError) as caught:
        profile(folder, suite, limit=2)
    assert str(caught.value).startswith(f"{folder / 'evals' / 'pairs'}: changed since")
    assert "sample (--limit 5 --seed 1 -> --limit 2 --seed 1)" in str(caught.value)
    assert profile(folder, suite, limit=2, resume_changed="reask").manifest.tasks == {"SINGLE-T": 2}


def test_a_profile_resumed_with_another_suite_file_is_refused_or_recorded(in_tmp):
    dataset = two_template_dataset(in_tmp)
    first, other, folder = in_tmp / "first.yaml", in_tmp / "other.yaml", in_tmp / "profile"
    first.write_text(suite_text(dataset, 3))
    other.write_text(suite_text(dataset, 3, name="another", entry="renamed"))
    profile(folder, first)
    with pytest.raises(RunError, match=r"changed since its records were made: suite \(sha256"):
        profile(folder, other)
    assert read_manifest(folder).suite["name"] == "scoped"  # left as it was
    result = profile(folder, other, resume_changed="reask")
    assert [c.input for c in result.manifest.changes] == ["suite"]
    assert list(result.manifest.entries) == ["renamed"]  # the removed entry is not reported
    report = (folder / "report.md").read_text()
    assert "suite another" in report and "| pairs |" not in report


def test_the_profile_command_takes_resume_changed(in_tmp):
    dataset = two_template_dataset(in_tmp)
    suite, folder = in_tmp / "suite.yaml", in_tmp / "profile"
    suite.write_text(suite_text(dataset, 3))
    args = ["profile", "--suite", str(suite), "--model", "scripted:says-true"]
    args += ["--run-dir", str(folder), "--boot", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    suite.write_text(suite_text(dataset, 2))
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "--resume-changed=reask" in refused.output
    resumed = CliRunner().invoke(app, [*args, "--resume-changed", "reask"])
    assert resumed.exit_code == 0, resumed.output
    assert read_manifest(folder).tasks == {"SINGLE-T": 2}


def test_a_profile_that_fails_says_so_in_its_report(in_tmp):
    dataset = two_template_dataset(in_tmp)
    broken = in_tmp / "broken.jsonl"
    broken.write_text('{"id": "x", "task": "SINGLE-T"\n')
    suite, folder = in_tmp / "suite.yaml", in_tmp / "profile"
    suite.write_text(
        suite_text(dataset, 3).replace(
            "competences:", f"  broken:\n    dataset: {{path: {broken}}}\ncompetences:"
        )
    )
    with pytest.raises(GramagentsError):
        profile(folder, suite)
    report = (folder / "report.md").read_text()
    title = report.splitlines()[0]
    assert title == "# Profile profile (failed)" and "(running)" not in report
    assert f"Stopped before its statistics: {broken}:1:" in report
    assert "- pairs: evals/pairs (complete)" in report
    assert read_manifest(folder).status == "partial"


def test_a_failed_eval_s_report_says_why_it_stopped(in_tmp, monkeypatch):
    import gramagents.workflow.eval as eval_module

    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run)

    async def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(eval_module, "_evaluate", broken)
    with pytest.raises(RuntimeError):
        evaluate(dataset, run)
    report = (run / "report.md").read_text()
    assert "- status: partial (stopped: RuntimeError: disk on fire);" in report
