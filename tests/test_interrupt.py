"""Ctrl-C and SIGTERM stop an eval in seconds, keep what was answered, and resume cleanly.

The eval is the real command line on the embedded model, in a subprocess, sent real signals.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gramagents.models import BackendSettings, Model, create_backend
from gramagents.records import ChatRequest, Message
from gramagents.runtime.cache import ResponseCache
from gramagents.runtime.interrupt import STOP
from gramagents.testing.drills import cli_env, jsonl_lines, run_cli

from .conftest import EXAMPLE_TABLE


def _item_ids(run: Path, name: str) -> list[str]:
    return [json.loads(line)["item_id"] for line in jsonl_lines(run / name)]


class Eval:
    """`gramagents eval` of a build on the embedded model, run in the background."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, seconds: float = 300) -> None:
        deadline = time.monotonic() + seconds
        while not any(text in line for line in self.lines):
            assert self.process.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.1)

    def stop(self, *signals: signal.Signals, apart: float = 0.3) -> float:
        """Send the signals; the seconds from the first to the process's end."""
        started = time.monotonic()
        for at, sig in enumerate(signals):
            if at:
                time.sleep(apart)
            self.process.send_signal(sig)
        self.process.wait(timeout=120)
        return time.monotonic() - started


def _manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_ctrl_c_stops_an_eval_of_the_embedded_model_in_seconds_and_keeps_its_answers(tmp_path):
    """SIGINT while the embedded model decodes: the eval ends within 10 s, exit 130; every
    answer made is recorded once, nothing is counted failed, the rest is not asked. SIGTERM
    followed by a second signal ends it at once, the folder still resumable. The last rerun
    asks only what was never answered.

    The model batches 4 rows (a transport option: the same model, the same answers), so that
    answers are recorded while later batches decode.
    """
    env = cli_env(tmp_path / "cache.sqlite", GRAMAGENTS_PROGRESS_S="1")
    build = tmp_path / "build"
    built = run_cli(
        [sys.executable, "-m", "gramagents", "build", "cpg", "--source", str(EXAMPLE_TABLE),
         "--agents", "off", "--run-dir", str(build)],
        env,
        tmp_path,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    run = tmp_path / "run"
    # batches of 4 rows: the first answers are recorded while later batches decode
    command = [sys.executable, "-m", "gramagents", "eval", str(build), "--limit", "5",
               "--model", "smollm2?batch_size=4", "--run-dir", str(run)]  # fmt: skip

    first = Eval(command, env, tmp_path)
    first.wait_for(", answered ")
    time.sleep(1)  # the next batches decoding
    took = first.stop(signal.SIGINT)
    stderr = "".join(first.lines)
    assert first.process.returncode == 130, stderr
    assert took < 10, (took, stderr)
    assert "stopping: keeping the answers already made" in stderr
    assert stderr.rstrip().endswith("interrupted; re-run the same command to resume")
    manifest = _manifest(run)
    counts = manifest["counts"]
    assert manifest["status"] == "partial" and manifest["reason"].startswith("interrupted")
    answered = _item_ids(run, "responses.jsonl")
    assert sorted(answered) == sorted(_item_ids(run, "scores.jsonl"))
    assert len(set(answered)) == len(answered)
    assert not (run / "failures.jsonl").exists() and counts["failed"] == 0
    assert counts["not_asked"] == counts["items"] - len(answered) > 0
    assert counts["requests_sent"] == len(answered)  # the model was asked nothing else

    second = Eval(command, env, tmp_path)  # resumed, then stopped twice
    second.wait_for("eval smollm2: ")
    time.sleep(0.5)
    # the second signal soon after the first (apart, so that the two are not merged into one
    # delivery), while the batch in hand still decodes: a quiet machine answers the rest of
    # this small sample within a second or two of a graceful stop
    took = second.stop(signal.SIGTERM, signal.SIGTERM, apart=0.05)
    assert second.process.returncode == 130 and took < 5, (took, "".join(second.lines))
    assert "stopped at once" in "".join(second.lines)

    third = run_cli(command, env, tmp_path)
    assert third.returncode == 0, third.stderr
    final = _manifest(run)
    assert final["status"] == "complete" and final["counts"]["failed"] == 0
    kept = set(answered)
    recorded = _item_ids(run, "scores.jsonl")
    assert len(recorded) == len(set(recorded)) == final["counts"]["items"]  # each item once
    assert kept <= set(recorded)
    # asked now: exactly what no earlier run recorded (served from the cache or the model)
    assert final["counts"]["requests_sent"] + final["counts"]["cache_hits"] == counts["items"]
    assert final["counts"]["requests_sent"] <= counts["items"] - len(kept)


@pytest.mark.parametrize("cached", [True, False])
def test_a_stop_abandons_api_requests_in_flight_and_keeps_the_answers_made(
    fake_server, fresh_cache, cached
):
    """Requests to a slow server, a stop after the first answers: those are kept (and
    cached), the ones still out come back not asked at once, never as failures."""
    fake_server.responder = lambda body: "T"
    backend = create_backend(f"openai:fake@{fake_server.base_url}", BackendSettings(concurrency=2))
    cache = ResponseCache(fresh_cache) if cached else None
    model = Model(backend, cache)
    fake_server.delay = 0.3
    requests = [ChatRequest(messages=[Message(role="user", content=f"q{i}")]) for i in range(6)]

    async def go():
        asking = asyncio.ensure_future(model.generate(requests))
        while fake_server.stats()["chat_requests"] < 4:  # two answered, two more out
            await asyncio.sleep(0.01)
        STOP.request()
        started = time.monotonic()
        answers = await asking
        await backend.aclose()
        return answers, time.monotonic() - started

    STOP.reset(armed=True)
    try:
        answers, took = asyncio.run(go())
    finally:
        STOP.reset()
    assert took < 0.25  # not the 0.3 s the server takes
    assert [a.text for a in answers[:2]] == ["T", "T"]
    assert all(a.interrupted and a.error and a.error.startswith("not asked") for a in answers[2:])
    assert model.stats.failed == 0
    if cache is not None:
        assert len(cache) == 2  # the answers made, and nothing for the rest
