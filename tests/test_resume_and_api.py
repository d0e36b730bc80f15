"""Kill an eval halfway and resume it; run the same dataset against an OpenAI-compatible server."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gramagents.testing.drills import cli_env, drill_answer, eval_command, jsonl_lines, run_cli
from gramagents.testing.openai_server import FakeChatServer

from .conftest import EXAMPLE_TABLE

pytestmark = pytest.mark.slow


answer = drill_answer
lines = jsonl_lines


def command(dataset: Path, server: FakeChatServer, run_dir: Path, *extra: str) -> list[str]:
    return eval_command(dataset, server.base_url, run_dir, concurrency=2, timeout=None, extra=extra)


def run(cmd: list[str], cache: Path, cwd: Path) -> subprocess.CompletedProcess:
    return run_cli(cmd, cli_env(cache), cwd, timeout=300)


@pytest.fixture
def dataset(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "gramagents",
        "build",
        "cpg",
        "--source",
        str(EXAMPLE_TABLE),
        "--agents",
        "off",
        "--run-dir",
        str(tmp_path / "data"),
    ]
    subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True, timeout=120)
    return tmp_path / "data"


def test_an_eval_killed_halfway_resumes_to_the_same_scores(tmp_path, dataset):
    with FakeChatServer(responder=answer, delay=0.03) as server:
        reference = run(command(dataset, server, tmp_path / "ref"), tmp_path / "a.sqlite", tmp_path)
        assert reference.returncode == 0, reference.stderr

        killed_dir = tmp_path / "killed"
        env = {**os.environ, "GRAMAGENTS_CACHE": str(tmp_path / "b.sqlite")}
        process = subprocess.Popen(
            command(dataset, server, killed_dir),
            env=env,
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        scores = killed_dir / "scores.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if scores.exists() and len(lines(scores)) >= 64:
                break
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done_before = len(lines(scores))
        total = len(lines(dataset / "dataset.jsonl"))
        assert 64 <= done_before < total
        manifest = json.loads((killed_dir / "manifest.json").read_text())
        assert manifest["status"] == "partial"

        resumed = run(command(dataset, server, killed_dir), tmp_path / "b.sqlite", tmp_path)
        assert resumed.returncode == 0, resumed.stderr

    manifest = json.loads((killed_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["counts"]["items"] == total
    assert sorted(lines(scores)) == sorted(lines(tmp_path / "ref" / "scores.jsonl"))
    assert len(set(lines(scores))) == total
    response_ids = [json.loads(x)["item_id"] for x in lines(killed_dir / "responses.jsonl")]
    assert len(response_ids) == len(set(response_ids)) == total


def test_an_api_model_writes_the_same_records_as_the_local_model(tmp_path, dataset):
    with FakeChatServer(responder=answer) as server:
        api = run(
            command(dataset, server, tmp_path / "api", "--limit", "3"),
            tmp_path / "c.sqlite",
            tmp_path,
        )
        assert api.returncode == 0, api.stderr
    local = run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "eval",
            str(dataset),
            "--model",
            "smollm2",
            "--run-dir",
            str(tmp_path / "local"),
            "--limit",
            "3",
        ],
        tmp_path / "d.sqlite",
        tmp_path,
    )
    assert local.returncode == 0, local.stderr
    api_dir, local_dir = tmp_path / "api", tmp_path / "local"
    assert {p.name for p in api_dir.iterdir()} == {p.name for p in local_dir.iterdir()}
    for name in ("responses.jsonl", "scores.jsonl"):
        api_keys = [set(json.loads(x)) for x in lines(api_dir / name)]
        local_keys = [set(json.loads(x)) for x in lines(local_dir / name)]
        assert api_keys == local_keys and len(api_keys) == 3 * 8  # three items of each bank
    api_summary = json.loads((api_dir / "summary.json").read_text())
    local_summary = json.loads((local_dir / "summary.json").read_text())
    assert [set(r) for r in api_summary] == [set(r) for r in local_summary]
    assert [(r["task"], r["n"]) for r in api_summary] == [
        (r["task"], r["n"]) for r in local_summary
    ]
    assert (
        json.loads((api_dir / "manifest.json").read_text()).keys()
        == json.loads((local_dir / "manifest.json").read_text()).keys()
    )
