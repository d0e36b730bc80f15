"""`gramagents.build`, `evaluate`, `profile` and `open_run`: the command line's jobs from Python."""

from __future__ import annotations

import _thread
import asyncio
import dataclasses
import hashlib
import inspect
import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest
from typer.testing import CliRunner

import gramagents
from gramagents import cli, jobs
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import EvalManifest, Item, ScoreRecord, SummaryRow

from .conftest import EXAMPLE_TABLE
from .test_memory import process_state


def verdict(request) -> str:
    """A deterministic reply per prompt: T, F, A, B or nothing readable."""
    text = request.messages[-1].content
    return ["T", "F", "A", "B", "I cannot say"][hashlib.sha256(text.encode()).digest()[0] % 5]


ScriptedBackend.register("api-verdict", verdict)
SCRIPTED = "scripted:api-verdict"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> gramagents.BuildResult:
    """The CPG example's banks, built once for this module from Python (agents off)."""
    folder = tmp_path_factory.mktemp("built") / "build"
    return gramagents.build("cpg", EXAMPLE_TABLE, folder, agents=False, limit=8, progress=False)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli.app, list(args))
    return result.exit_code, result.stderr.strip()


def test_build_and_evaluate_give_the_command_lines_summary_in_and_out_of_an_event_loop(
    built, tmp_path
):
    code, _ = invoke(
        "build", "cpg", "--source", str(EXAMPLE_TABLE), "--agents", "off", "--limit", "8",
        "--run-dir", str(tmp_path / "cli-build"),
    )  # fmt: skip
    assert code == 0
    assert (
        tmp_path / "cli-build" / "dataset.jsonl"
    ).read_bytes() == built.dataset_path.read_bytes()
    code, _ = invoke(
        "eval", str(tmp_path / "cli-build"), "--model", SCRIPTED, "--limit", "3",
        "--run-dir", str(tmp_path / "cli-eval"),
    )  # fmt: skip
    assert code == 0
    from_cli = json.loads((tmp_path / "cli-eval" / "summary.json").read_text())

    plain = gramagents.evaluate(built.path, SCRIPTED, tmp_path / "plain", limit=3, progress=False)

    async def in_a_cell():  # a notebook cell runs inside an event loop
        rebuilt = gramagents.build(
            "cpg", EXAMPLE_TABLE, tmp_path / "loop-build", agents=False, limit=8, progress=False
        )
        evaluated = gramagents.evaluate(
            rebuilt.path, [SCRIPTED], tmp_path / "loop", limit=3, progress=False
        )
        awaited = await gramagents.aevaluate(
            rebuilt.path, SCRIPTED, tmp_path / "awaited", limit=3, progress=False
        )
        return rebuilt, evaluated, awaited

    rebuilt, in_loop, awaited = asyncio.run(in_a_cell())
    assert rebuilt.summary == built.summary
    assert len(from_cli) > 5 and {r["model"] for r in from_cli} == {SCRIPTED}
    for result in (plain, in_loop, awaited):
        assert [r.model_dump() for r in result.summary] == from_cli


def test_results_are_typed_and_read_back_by_open_run(built, tmp_path):
    assert isinstance(built, gramagents.BuildResult) and built.complete
    assert built.manifest.kind == "build" and built.manifest.recipe == "cpg"
    assert [(r.task, r.n) for r in built.summary] == list(built.manifest.tasks.items())
    items = list(built.records())
    assert all(isinstance(i, Item) for i in items) and len(items) == built.manifest.counts.items
    run = gramagents.evaluate(built.path, SCRIPTED, tmp_path / "e", limit=2, progress=False)
    assert isinstance(run, gramagents.EvalResult) and isinstance(run.manifest, EvalManifest)
    assert run.report_path == tmp_path / "e" / "report.md" and run.report_path.is_file()
    assert run.summary and all(isinstance(r, SummaryRow) for r in run.summary)
    scores = list(run.records())
    assert scores and all(isinstance(s, ScoreRecord) for s in scores)
    assert {r.item_id for r in run.records("responses")} == {s.item_id for s in scores}
    assert run.manifest.command[:2] == ["gramagents.evaluate", repr(str(built.path))]
    again = gramagents.open_run(tmp_path / "e")
    assert type(again) is gramagents.EvalResult and again.summary == run.summary
    assert type(gramagents.open_run(built.path)) is gramagents.BuildResult


def test_to_pandas_columns_and_a_clear_error_without_pandas(built, tmp_path, monkeypatch):
    run = gramagents.evaluate(built.path, SCRIPTED, tmp_path / "e", limit=2, progress=False)
    summary = run.to_pandas()
    assert list(summary.columns) == ["model", "task", "n", "metric", "score", "invalid_rate"]
    assert len(summary) == len(run.summary)
    records = run.to_pandas("records")
    assert {"model", "item_id", "task", "gold", "extracted", "invalid", "scores.acc"} <= set(
        records.columns
    )
    assert "meta.category" in records.columns and len(records) == len(list(run.records()))
    assert list(built.to_pandas().columns) == ["task", "n"]
    assert {"id", "task", "answer", "template"} <= set(built.to_pandas("records").columns)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(gramagents.MissingExtra, match=r"pip install 'gramagents\[pandas\]'"):
        run.to_pandas()


def test_errors_are_the_exceptions_the_command_line_prints_as_one_line(built, tmp_path):
    with pytest.raises(gramagents.InputError) as missing:
        gramagents.evaluate(tmp_path / "nope", progress=False)
    assert invoke("eval", str(tmp_path / "nope")) == (2, f"error: {missing.value}")
    with pytest.raises(gramagents.GramagentsError, match="unknown recipe 'nope'") as unknown:
        gramagents.build("nope", EXAMPLE_TABLE, progress=False)
    assert invoke("build", "nope", "--source", str(EXAMPLE_TABLE)) == (2, f"error: {unknown.value}")
    with pytest.raises(gramagents.InputError, match="no such file or folder"):
        gramagents.build("cpg", tmp_path / "absent.jsonl", progress=False)
    with pytest.raises(gramagents.GramagentsError, match="resume_changed: 'maybe'"):
        gramagents.evaluate(tmp_path, resume_changed="maybe", progress=False)  # type: ignore[arg-type]
    with pytest.raises(gramagents.SpecError):
        gramagents.evaluate(built.path, "nope:x", progress=False)
    assert not (tmp_path / "runs").exists()


def test_a_resumed_evaluate_asks_nothing_twice(built, tmp_path):
    asked: Counter[str] = Counter()
    failing = {"on": True}

    def flaky(request) -> str:
        text = request.messages[-1].content
        asked[text] += 1
        if failing["on"] and hashlib.sha256(text.encode()).digest()[0] % 3 == 0:
            raise ConnectionError("the server went away")
        return verdict(request)

    ScriptedBackend.register("api-flaky", flaky)
    options = {"limit": 4, "cache": False, "progress": False}
    first = gramagents.evaluate(built.path, "scripted:api-flaky", tmp_path / "e", **options)
    assert not first.complete and first.manifest.counts.failed > 0
    answered_first = set(asked)
    scored_first = [s.item_id for s in first.records()]
    failing["on"] = False
    second = gramagents.evaluate(built.path, "scripted:api-flaky", tmp_path / "e", **options)
    assert second.complete
    assert max(asked.values()) <= 2
    again = {text for text, n in asked.items() if n == 2}
    assert len(again) == first.manifest.counts.failed  # only the failed ones, once more
    assert set(asked) == answered_first
    scored = [s.item_id for s in second.records()]
    assert len(scored) == len(set(scored)) == len(scored_first) + len(again)


def test_a_call_leaves_the_process_as_it_found_it(built, tmp_path):
    before = process_state(), sorted(t.name for t in threading.enumerate())

    async def in_a_cell():
        return gramagents.evaluate(built.path, SCRIPTED, tmp_path / "e", limit=2, progress=True)

    assert asyncio.run(in_a_cell()).complete
    assert (process_state(), sorted(t.name for t in threading.enumerate())) == before


@pytest.mark.parametrize("loop", ["a notebook's", "asyncio.run's"])
def test_an_interrupt_in_a_cell_cancels_the_job_and_reaches_the_caller(loop):
    from gramagents.runtime.loop import run_sync

    # Ctrl-C as a kernel or a terminal has it, even where the tests were started with it
    # ignored (a shell's background job): `interrupt_main` does nothing then.
    earlier = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _interrupt_in_a_cell(loop, run_sync)
    finally:
        signal.signal(signal.SIGINT, earlier)


def _interrupt_in_a_cell(loop: str, run_sync: Any) -> None:

    seen: list[str] = []

    running = threading.Event()

    async def job():
        running.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    def interrupt() -> None:  # Ctrl-C once the job runs
        if running.wait(10):
            _thread.interrupt_main()

    async def cell():
        threading.Thread(target=interrupt).start()
        run_sync(job)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        if loop == "asyncio.run's":  # its Ctrl-C cancels the waiting task
            asyncio.run(cell())
        else:  # a kernel's loop: Ctrl-C is a KeyboardInterrupt where the thread is
            kernel = asyncio.new_event_loop()
            try:
                kernel.run_until_complete(cell())
            finally:
                kernel.close()
    assert seen == ["cancelled"] and time.monotonic() - started < 10
    assert not [t for t in threading.enumerate() if t.name == "gramagents-call"]


def test_gramagents_profile_stays_the_function_when_the_profiles_package_loads():
    import gramagents.profiles.run  # noqa: F401

    assert gramagents.profile is jobs.profile and callable(gramagents.profile)


def test_importing_gramagents_is_cheap_and_a_name_loads_only_its_module():
    code = (
        "import sys\n"
        "import gramagents\n"
        "print(sorted(m for m in sys.modules if m.startswith('gramagents')))\n"
        "gramagents.evaluate\n"
        "print(any(m in sys.modules for m in ('gramagents.workflow.eval', 'langgraph', 'torch')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['gramagents', 'gramagents.lazy']", "False"]  # lazy: the lookup itself


@pytest.mark.parametrize(
    ("function", "option_type", "internal"),
    [
        ("build", "gramagents.workflow.build:BuildOptions", {"cache_path", "retry"}),
        (
            "evaluate",
            "gramagents.workflow.eval:EvalOptions",
            {"cache_path", "retry", "pair_methods"},
        ),
        ("profile", "gramagents.profiles.run:ProfileOptions", set()),
    ],
)
def test_every_option_reaches_python_and_the_coroutine_takes_the_same(
    function, option_type, internal
):
    import importlib

    module, _, name = option_type.partition(":")
    fields = {f.name for f in dataclasses.fields(getattr(importlib.import_module(module), name))}
    plain = inspect.signature(getattr(gramagents, function)).parameters
    assert plain == inspect.signature(getattr(gramagents, f"a{function}")).parameters
    named = {jobs.RENAMED.get(p, p) for p in plain} | {"judge", "settings", "fmt"}
    assert fields - internal <= named


COMMANDS = {"build": "build", "evaluate": "eval", "profile": "profile"}
CLI_NAMES = {"no_cache": "cache", "model": "models", "judge": "judge_models", "fmt": "format"}


@pytest.mark.parametrize("function", COMMANDS)
def test_the_keyword_arguments_are_the_command_lines_options_with_its_defaults(function):
    import typer.main

    command = typer.main.get_command(cli.app).commands[COMMANDS[function]]
    python = inspect.signature(getattr(gramagents, function)).parameters
    for param in command.params:
        name = CLI_NAMES.get(param.name, "sources" if param.name == "source" else param.name)
        if param.name == "threads":  # the process's torch threads: the command line's alone
            continue
        if function == "build" and param.name == "source":
            name = "source"
        assert name in python, (function, param.name)
        default = python[name].default
        if param.name == "no_cache":
            assert default is (not param.default)
        elif name in ("models", "judge_models", "sources"):
            continue  # repeatable options: a sequence
        elif param.name == "agents":
            assert default is (param.default.value == "on")
        elif param.default is not None and not isinstance(param.default, str | int | bool):
            assert default == param.default.value, (function, name)  # an enum's value
        elif param.required is False and name not in ("recipe", "source", "dataset"):
            assert default == param.default, (function, name)


@pytest.mark.slow
def test_on_the_embedded_model_python_in_an_event_loop_and_the_command_line_agree(
    smollm2, tmp_path
):
    """The quick start's jobs (CPG example, agents off) with the embedded model, --limit 2."""
    commands = [
        ["build", "cpg", "--source", str(EXAMPLE_TABLE), "--agents", "off"],
        ["eval", str(tmp_path / "cli-build"), "--limit", "2"],
    ]
    for args, folder in zip(commands, ("cli-build", "cli-eval"), strict=True):
        subprocess.run(
            [sys.executable, "-m", "gramagents", *args, "--run-dir", str(tmp_path / folder)],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            timeout=600,
        )

    async def in_a_cell():
        built = gramagents.build("cpg", EXAMPLE_TABLE, tmp_path / "b", agents=False)
        return gramagents.evaluate(built.path, run_dir=tmp_path / "e", limit=2)

    result = asyncio.run(in_a_cell())
    from_cli = json.loads((tmp_path / "cli-eval" / "summary.json").read_text())
    assert [r.model_dump() for r in result.summary] == from_cli
    assert {r["model"] for r in from_cli} == {"smollm2"} and len(from_cli) >= 8
