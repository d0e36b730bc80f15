"""Slips a new user met: each message says what happened and what to do, in plain words."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console
from typer.testing import CliRunner

import gramagents
from gramagents import cli
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import BuildManifest, ScoreRecord, SummaryRow
from gramagents.runtime.run import Run

from .conftest import EXAMPLE_TABLE, ROOT
from .test_startup import _cli_imports

PAIRS = ROOT / "examples" / "minimal-pairs"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli.app, list(args))
    return result.exit_code, result.stderr.strip()


def test_eval_of_a_build_still_running_names_the_build_and_then_says_it_stopped(tmp_path):
    folder = tmp_path / "build"
    with Run.open(folder, "build") as run:  # a build that has begun: manifest, no dataset yet
        run.write_manifest(BuildManifest(run_id="build", command=["gramagents", "build"], seed=1))
        with pytest.raises(gramagents.InputError) as running:
            gramagents.evaluate(folder, progress=False)
    message = str(running.value)
    assert message.startswith(f"{folder}: its build is still running (pid ")
    assert "evaluate it when the build ends" in message and "is it a build run" not in message
    with pytest.raises(gramagents.InputError, match="its build did not finish"):
        gramagents.evaluate(folder, progress=False)


@pytest.mark.parametrize("name", ["blimp", "climp"])
def test_a_minimal_pair_folder_without_format_gets_the_format_to_give(name):
    code, line = invoke("eval", str(PAIRS / name))
    assert code == 2
    assert line == (
        f"error: {PAIRS / name}: no dataset.jsonl in this folder; its files read with "
        f"--format {name}"
    )


def test_a_misspelled_suite_lists_the_known_suites():
    code, line = invoke("profile", "--suite", "en-syntx")
    assert code == 2
    assert line.startswith("error: unknown suite 'en-syntx' (did you mean 'en-syntax'? known: ")
    assert "zh-pedagogy" in line and "looked in" not in line


def test_a_missing_source_is_told_before_the_build_loads(tmp_path):
    done, modules = _cli_imports(["build", "cpg", "--source", "nope.jsonl"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: nope.jsonl: no such file or folder (the build's --source)"
    assert "gramagents.workflow.build" not in modules and "torch" not in modules


def test_a_bad_choice_is_one_plain_line(monkeypatch, capsys):
    from gramagents.cli_runtime import standalone

    args = ["build", "cpg", "--source", str(EXAMPLE_TABLE), "--agents", "of"]
    monkeypatch.setattr("sys.argv", ["gramagents", *args])
    assert standalone(cli.app) == 2  # as `main` runs the app
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: Invalid value for '--agents': 'of' is not one of 'on', 'off'")
    assert "Value error" not in line and ".'" not in line and line.endswith("--help')")


def test_a_sample_of_one_is_one_question():
    from gramagents.report.markdown import _sample_lines

    one = {"limit": 1, "seed": 3, "method": "spread"}
    assert _sample_lines(one) == ["- sampled: at most 1 question per task, seed 3 (spread)"]
    assert "at most 2 questions per task" in _sample_lines({**one, "limit": 2})[0]


def test_the_build_report_names_failures_jsonl_only_when_it_is_there(tmp_path):
    from gramagents.report.build import render_build_report

    manifest = BuildManifest(run_id="b", command=[], seed=1, source={"path": "x"})
    assert "failures.jsonl" not in render_build_report(manifest, tmp_path)
    (tmp_path / "failures.jsonl").write_text("{}\n")
    assert "0 failures (`failures.jsonl`)" in render_build_report(manifest, tmp_path)


def test_a_build_with_warnings_says_where_they_are_listed(monkeypatch, tmp_path):
    said: list[str] = []
    monkeypatch.setattr(cli, "_say", said.append)
    manifest = BuildManifest(
        run_id="b", command=[], seed=1, tasks={"T": 2}, artifacts={"warnings": ["a", "b"]}
    )
    cli._say_build(gramagents.BuildResult(tmp_path, manifest))
    assert f"2 warnings, listed in {tmp_path / 'report.md'} (its Warnings section)" in said


def test_a_grammar_book_run_says_why_each_figure_is_missing():
    from gramagents.recipes.grammar_book.report import not_drawn

    figures = SimpleNamespace(tasks=[("GB-TASK4", "Task 4")], translation={})
    lines = not_drawn(figures, {"4": False, "3": True, "2": False})  # type: ignore[arg-type]
    assert lines[0] == "## Figures not drawn"
    text = "\n".join(lines)
    assert "Figure 4 (accuracy as the options grow) needs Task 1, 2 or 3" in text
    assert "this run's grammar tasks: Task 4" in text and "Figure 3" not in text
    assert "this run scored no translation" in text
    assert not_drawn(figures, {"4": True, "3": True, "2": True}) == []  # type: ignore[arg-type]


def test_weakest_points_show_an_invalid_reply_as_invalid():
    from gramagents.profiles.compute import Settings, weakest_points
    from gramagents.profiles.scores import ItemScore
    from gramagents.report.profile import weakest_lines

    rows = [
        ItemScore(
            "cpg", "m", f"q{n}", "SINGLE-T", 0.0, 0.5, True, "cpg:p", None, "T", reason="refusal"
        )
        for n in range(6)
    ]
    data = {"weakest": weakest_points(rows, Settings(min_items=5)), "settings": {"min_items": 5}}
    text = "\n".join(weakest_lines(data))
    assert "gave an invalid reply (refusal)" in text and "null" not in text


class Recorded:
    """A progress sink that keeps what it is told."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def start(self, label: str, total: int) -> None:
        self.lines.append(f"start {label}")

    def advance(self, steps: int = 1, **tallies: int) -> None:
        pass

    def note(self, message: str) -> None:
        self.lines.append(f"note {message}")

    def stop(self) -> None:
        pass


def test_a_profiles_stage_lines_name_their_entry(in_tmp: Path):
    ScriptedBackend.register("new-user-true", lambda request: "T")
    suite = in_tmp / "planted.yaml"
    suite.write_text(
        f"suite: planted\ndescription: d\nentries:\n  mine:\n"
        f"    build: {{recipe: cpg, source: {EXAMPLE_TABLE}, limit: 6}}\n    limit: 3\n"
        "competences:\n  holds: [SINGLE-T]\n  absent: [SINGLE-F]\n",
        encoding="utf-8",
    )
    sink = Recorded()
    result = gramagents.profile(str(suite), "scripted:new-user-true", "p", boot=50, progress=sink)
    assert sink.lines and all(line.split(" ", 1)[1].startswith("mine: ") for line in sink.lines)
    assert any(line.startswith("start mine: eval scripted:new-user-true") for line in sink.lines)
    assert isinstance(result, gramagents.ProfileResult) and result.complete
    assert [(r.task, r.n) for r in result.summary] == [("holds", 3), ("absent", 3)]
    assert all(isinstance(r, SummaryRow) for r in result.summary)
    assert all(isinstance(r, ScoreRecord) for r in result.records())
    assert list(result.to_pandas().columns)[:2] == ["model", "task"]


def test_progress_is_a_bar_in_a_notebook_with_widgets_else_a_plain_line(monkeypatch):
    import importlib.util

    from gramagents import progress

    notebook = Console(file=io.StringIO(), force_jupyter=True)
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "ipywidgets" else found(name)
    )
    assert isinstance(progress.display(notebook), progress.LineProgress)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    assert isinstance(progress.display(notebook), progress.RichProgress)
    log = Console(file=io.StringIO(), force_terminal=False, force_jupyter=False)
    assert isinstance(progress.display(log), progress.LineProgress)
