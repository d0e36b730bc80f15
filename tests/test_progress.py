"""How far a command is, when its output goes to a file: plain lines, counts that rise."""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from gramagents.progress import LineProgress, Steps
from gramagents.runtime.answers import counting
from gramagents.runtime.batching import MicroBatcher, deliver, delivering
from gramagents.runtime.threads import choose_threads
from gramagents.testing.drills import (
    cli_env,
    drill_answer,
    eval_command,
    run_cli,
    write_drill_dataset,
)
from gramagents.testing.openai_server import FakeChatServer

from .conftest import ROOT

COUNT = re.compile(r"^(?P<label>.+?): (?P<done>\d+)/(?P<total>\d+) \(\d+ %\)")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def counts_of(lines: list[str], label: str) -> list[int]:
    """The done counts of the progress lines of one phase, in order."""
    return [
        int(found["done"])
        for line in lines
        if (found := COUNT.match(line)) and found["label"].startswith(label)
    ]


def test_a_phase_prints_whole_lines_with_rate_eta_and_tallies():
    sink = io.StringIO()
    progress = LineProgress(Console(file=sink, width=300), interval=0.0)
    progress.start("pairs (minimal-pair-generator)", 4)
    for outcome in ("accepted", "rejected", "accepted", "accepted"):
        progress.advance(1, **{outcome: 1})
    progress.stop()
    lines = sink.getvalue().splitlines()
    assert counts_of(lines, "pairs") == [1, 2, 3, 4]
    assert "ETA" in lines[0] and "/s" in lines[0] and "accepted 1" in lines[0]
    assert lines[-1].startswith("pairs (minimal-pair-generator): 4/4 (100 %)")
    assert "accepted 3, rejected 1" in lines[-1]
    assert not any(CONTROL.search(line) for line in lines)


def test_a_phase_that_makes_no_visible_progress_still_says_it_runs():
    sink = io.StringIO()
    progress = LineProgress(Console(file=sink, width=300), interval=0.05)
    progress.start("route", 0)
    time.sleep(0.4)
    progress.stop()
    lines = sink.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.startswith("route: 0 done, elapsed") for line in lines)
    printed = len(lines)
    time.sleep(0.2)  # stopped: the heartbeat is gone
    assert len(sink.getvalue().splitlines()) == printed


def test_a_quick_phase_prints_only_its_last_line():
    sink = io.StringIO()
    progress = LineProgress(Console(file=sink, width=300), interval=60.0)
    progress.start("eval smollm2", 3)
    progress.advance(1)
    progress.advance(2)
    progress.stop()
    assert [line.split(",")[0] for line in sink.getvalue().splitlines()] == [
        "eval smollm2: 3/3 (100 %)"
    ]


@pytest.mark.parametrize(
    ("cpus", "load", "threads"), [(2, 0.1, 2), (2, 0.9, 1), (2, 5.0, 1), (16, 3.2, 13)]
)
def test_threads_take_the_cores_the_load_leaves(cpus, load, threads):
    assert choose_threads(cpus, load) == threads


def test_the_load_is_what_other_processes_use_now_not_the_lagging_average():
    import os
    import subprocess

    from gramagents.runtime.threads import busy_elsewhere

    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat here: the load average is used instead")
    quiet = busy_elsewhere(0.3)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        busy = busy_elsewhere(0.5)
    finally:
        spinner.kill()
        spinner.wait()
    assert quiet is not None and busy is not None
    # one more core kept busy by another process; on a machine already that busy the sample
    # cannot rise by a core, but it must then read it as busy as it is
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert busy >= min(quiet + 0.6, cores - 0.4)


def test_the_sampled_load_reads_the_cpus_of_the_process_only(tmp_path, monkeypatch):
    import itertools

    from gramagents.runtime import threads

    # cpu0 idle throughout; cpu1 busy for 30 of the 100 ticks between the two readings
    readings = itertools.cycle(
        [
            "cpu  200 0 0 200 0 0 0 0 0 0\ncpu0 0 0 0 100 0 0 0 0 0 0\n"
            "cpu1 200 0 0 100 0 0 0 0 0 0\nintr 1\n",
            "cpu  230 0 0 370 0 0 0 0 0 0\ncpu0 0 0 0 200 0 0 0 0 0 0\n"
            "cpu1 230 0 0 170 0 0 0 0 0 0\nintr 1\n",
        ]
    )
    stat = tmp_path / "stat"
    real_read = type(stat).read_text

    def read_text(self, *args, **kwargs):
        if self == stat:
            return next(readings)
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(type(stat), "read_text", read_text)
    monkeypatch.setattr(threads.time, "process_time", lambda: 0.0)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {1}, raising=False)
    assert threads.busy_elsewhere(0.0, stat) == pytest.approx(0.3)
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert threads.busy_elsewhere(0.0, stat) == pytest.approx(2 * 30 / 200)
    assert threads.busy_elsewhere(0.0, tmp_path / "none") is None


def pair_agent(body: dict) -> str:
    """Valid answers for the GEC recipe's two agents."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if "error_limited_to_item" in text:
        checks = ("error_limited_to_item", "alternatives_complete", "learner_style", "common_error")
        return json.dumps({**dict.fromkeys(checks, True), "reason": "one error on the item"})
    number = sum(map(ord, text)) % 1000
    return json.dumps(
        {
            "ungrammatical": f"He go to school {number} times.",
            "correction": f"He goes to school {number} times.",
            "alternatives": [],
        }
    )


@pytest.mark.slow
def test_an_eval_piped_to_a_file_prints_rising_counts(tmp_path: Path):
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 120)
    with FakeChatServer(responder=drill_answer, delay=0.02) as server:
        done = run_cli(
            eval_command(dataset, server.base_url, tmp_path / "eval", concurrency=4),
            cli_env(tmp_path / "cache.sqlite", GRAMAGENTS_PROGRESS_S="0"),
            tmp_path,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    counts = counts_of(lines, "eval openai:fake")
    assert len(counts) >= 3 and counts == sorted(counts) and counts[-1] == 120
    assert counts[0] < 120
    assert not any(CONTROL.search(line) for line in lines)


@pytest.mark.slow
def test_a_build_piped_to_a_file_prints_every_stage_and_its_calls_as_they_go(tmp_path: Path):
    recipe = tmp_path / "gec.yaml"  # one pair more per item than the list gives
    text = (ROOT / "graphs" / "gec.yaml").read_text(encoding="utf-8")
    recipe.write_text(text.replace("per_item: 3", "per_item: 4"), encoding="utf-8")
    with FakeChatServer(responder=pair_agent, delay=0.02) as server:
        done = run_cli(
            [
                sys.executable,
                "-m",
                "gramagents",
                "build",
                str(recipe),
                "--source",
                str(ROOT / "examples" / "gec" / "grammar-items.jsonl"),
                "--agent-model",
                f"openai:fake@{server.base_url}",
                "--run-dir",
                str(tmp_path / "build"),
            ],  # fmt: skip
            cli_env(tmp_path / "cache.sqlite", GRAMAGENTS_PROGRESS_S="0"),
            ROOT,
        )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text(encoding="utf-8"))
    for stage in manifest["stages"]:
        assert any(line.startswith(f"{stage}: ") for line in lines), (stage, lines)
    for stage in ("pairs", "pair-check"):
        counts = counts_of(lines, f"{stage} (")
        planned = manifest["stages"][stage]["planned"]
        assert planned > 1 and counts == sorted(counts), (stage, counts)
        assert set(range(1, planned + 1)) <= set(counts), (stage, counts)
    checked = [line for line in lines if line.startswith("pair-check (")]
    assert "accepted" in checked[-1]
    assert not any(CONTROL.search(line) for line in lines)


class Recorder:
    """A progress sink that keeps every call."""

    def __init__(self) -> None:
        self.total = 0
        self.steps: list[int] = []
        self.tallies: dict[str, int] = {}

    def start(self, label: str, total: int) -> None:
        self.total = total

    def advance(self, steps: int = 1, **tallies: int) -> None:
        self.steps.append(steps)
        for name, value in tallies.items():
            self.tallies[name] = self.tallies.get(name, 0) + value

    def note(self, message: str) -> None:
        pass

    def stop(self) -> None:
        pass


def test_steps_show_what_arrived_or_settled_never_backwards_nor_past_the_total():
    sink = Recorder()
    steps = Steps(sink.advance, 10)
    steps.arrive(3, answered=3)
    steps.settle(2)  # a chunk of 2 ended: its steps had arrived already
    steps.settle(6)  # a chunk of 6 ended, 1 of whose steps never arrived (a failed answer)
    steps.arrive(4, judged=4)  # late arrivals of settled chunks: nothing more to show
    steps.settle(2)
    steps.arrive(5)  # more than there is (a re-asked verdict): the total stays the total
    assert sink.steps == [3, 5, 0, 2]  # nothing to show, no call (but for tallies)
    assert sum(sink.steps) == 10 and sink.tallies == {"answered": 3, "judged": 4}


def test_a_batcher_hands_each_answer_back_as_the_model_makes_it_and_counts_it():
    release = threading.Event()

    def run_batch(requests):
        deliver(0, requests[0] * 10)  # the first inner batch is done
        release.wait(5)  # the rest takes longer
        return [r * 10 for r in requests]

    batcher = MicroBatcher(run_batch, max_batch=8)
    counted: list[int] = []

    async def ask():
        with counting(counted.append):
            job = asyncio.ensure_future(batcher.submit([1, 2, 3]))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if counted:
                break
        first = list(counted)
        release.set()
        return first, await job

    first, results = asyncio.run(ask())
    assert first == [1] and results == [10, 20, 30] and counted == [1, 1, 1]


def test_an_eval_counts_each_answer_as_it_comes_back_not_each_chunk(tmp_path: Path):
    import gramagents

    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 40)
    sink = Recorder()
    with FakeChatServer(responder=drill_answer, delay=0.01) as server:
        result = gramagents.evaluate(
            dataset, f"openai:fake@{server.base_url}", tmp_path / "e", concurrency=4,
            progress=sink,
        )  # fmt: skip
    assert result.complete and sink.total == 40 and sum(sink.steps) == 40
    assert sink.steps.count(1) >= 30  # one by one (a chunk is 16 items here)
    assert sink.tallies == {"answered": 40}


def test_a_judged_eval_counts_each_verdict_as_a_step(tmp_path: Path):
    import gramagents

    from .test_judge import judged_dataset

    dataset = judged_dataset(tmp_path / "dataset.jsonl")
    sink = Recorder()
    result = gramagents.evaluate(
        dataset, "scripted:edu-writer", tmp_path / "e", judge_models="scripted:full-marks",
        progress=sink,
    )  # fmt: skip
    assert result.complete
    assert sink.total == 10 and sum(sink.steps) == 10  # 5 answers and 5 verdicts
    assert sink.tallies == {"answered": 5, "judged": 5}
    assert len([s for s in sink.steps if s]) >= 6  # verdicts one by one, not with the chunk


@pytest.mark.slow
def test_a_local_model_hands_back_each_inner_batch_as_it_ends(smollm2, monkeypatch):
    from gramagents.records import ChatRequest, GenParams, Message

    monkeypatch.setattr(smollm2, "batch_size", 1)
    requests = [
        ChatRequest(
            messages=[Message(role="user", content=f"Say {word}.")],
            params=GenParams(max_tokens=3),
        )
        for word in ("yes", "no", "maybe")
    ]
    delivered: list[tuple[int, float]] = []
    with delivering(lambda index, generation: delivered.append((index, time.monotonic()))):
        results = smollm2._generate_sync(requests)
    ended = time.monotonic()
    assert sorted(i for i, _ in delivered) == [0, 1, 2] and len(results) == 3
    assert delivered[0][1] < ended - 0.01  # the first came back before the last was made
