"""Credentials are used and never written: an API key given by environment variable, a
password in a server's URL and a key given as a spec option are in no run folder, cache, log,
report or viewer, nor in the command's output, whether the run succeeds or fails."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from aiohttp import BasicAuth

from gramagents.testing.drills import cli_env, eval_command, run_cli, write_drill_dataset
from gramagents.testing.openai_server import FakeChatServer

from .conftest import EXAMPLE_TABLE, ROOT
from .test_kill_resume import build_command, gec_agent

pytestmark = pytest.mark.slow

KEY = "sk-gramagents-test-7f3a9c2e51d84b06a1e2c3d4e5f60718"


def fragments(key: str) -> list[bytes]:
    """The key, and pieces of it long enough to betray it (masked keys show their ends)."""
    raw = key.encode()
    return [raw, raw[:16], raw[-12:], json.dumps(key).encode()]


def leaks(paths: list[Path], texts: dict[str, str]) -> list[str]:
    found = []
    for path in paths:
        data = path.read_bytes()
        found += [f"{path}: {f!r}" for f in fragments(KEY) if f in data]
    for name, text in texts.items():
        found += [f"{name}: {f!r}" for f in fragments(KEY) if f in text.encode()]
    return found


def test_an_api_key_from_the_environment_is_never_written(tmp_path):
    home = tmp_path / "home"
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 20)
    recipe = tmp_path / "gec.yaml"
    text = (ROOT / "graphs" / "gec.yaml").read_text(encoding="utf-8")
    recipe.write_text(text.replace("per_item: 3", "per_item: 4"), encoding="utf-8")
    outputs: dict[str, str] = {}
    with FakeChatServer(responder=gec_agent, api_key=KEY) as server:
        env = cli_env(tmp_path / "cache" / "cache.sqlite", OPENAI_API_KEY=KEY)
        env["GRAMAGENTS_HOME"] = str(home)
        runs = {
            "build": build_command(recipe, server.base_url, tmp_path / "build"),
            "eval": eval_command(dataset, server.base_url, tmp_path / "eval"),
        }
        for name, cmd in runs.items():
            result = run_cli(cmd, env, tmp_path)
            assert result.returncode == 0, (name, result.stderr)
            outputs[f"{name} stdout"], outputs[f"{name} stderr"] = result.stdout, result.stderr
        # the key is really in use: the server refuses any other
        refused = run_cli(
            eval_command(dataset, server.base_url, tmp_path / "refused"),
            {**env, "OPENAI_API_KEY": "sk-wrong"},
            tmp_path,
        )
        assert refused.returncode == 2 and "401" in refused.stderr
        # a run that fails with the right key says why without it
        lost = run_cli(
            eval_command(dataset, "http://127.0.0.1:9/v1", tmp_path / "lost"), env, tmp_path
        )
        assert lost.returncode == 2
        outputs["failed stdout"], outputs["failed stderr"] = lost.stdout, lost.stderr
        assert server.stats()["chat_requests"] > 20
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "cache.sqlite" for p in written)
    assert {"report.md", "manifest.json", "responses.jsonl"} <= {p.name for p in written}
    assert leaks(written, outputs) == []


PASSWORD = "PASSWORD-8c1d5e7f"
PLANTED = "sk-planted-4b7e2a9c0d1f38e6a5b4c3d2e1f00917"


def test_planted_credentials_are_in_no_written_file_and_no_output(tmp_path):
    """A password in the server's URL, a key in the environment and a key given as a spec
    option: none of them in any file under the run folders, cache and viewer, or in what any
    command printed, whether it succeeded or failed."""
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 12)
    outputs: dict[str, str] = {}
    with FakeChatServer() as server:
        url = server.base_url.replace("http://", f"http://user:{PASSWORD}@")
        env = cli_env(tmp_path / "cache" / "cache.sqlite", OPENAI_API_KEY=PLANTED)
        env["GRAMAGENTS_HOME"] = str(tmp_path / "home")
        spec = f"openai:fake@{url}?http=httpx"  # the other HTTP client
        runs = {
            "eval": [*eval_command(dataset, url, tmp_path / "run")[:6], spec, "--run-dir",
                     str(tmp_path / "run")],
            "aiohttp": eval_command(dataset, url, tmp_path / "default"),  # the default client
            "option": [*eval_command(dataset, url, tmp_path / "opt")[:6],
                       f"openai:fake@{url}?api_key={PLANTED}", "--run-dir", str(tmp_path / "opt")],
            "view": [sys.executable, "-m", "gramagents", "view", str(tmp_path / "run"),
                     "--out", str(tmp_path / "site")],
            "report": [sys.executable, "-m", "gramagents", "report", str(tmp_path / "run")],
        }  # fmt: skip
        codes = {}
        for name, cmd in runs.items():
            result = run_cli(cmd, env, tmp_path)
            codes[name] = result.returncode
            outputs[f"{name} stdout"], outputs[f"{name} stderr"] = result.stdout, result.stderr
        assert server.stats()["chat_requests"] >= 12
    assert codes == {"eval": 0, "aiohttp": 0, "option": 2, "view": 0, "report": 0}, outputs
    assert "api_key=***" in outputs["option stderr"]
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != dataset]
    names = {p.name for p in written}
    assert {"manifest.json", "responses.jsonl", "scores.jsonl", "summary.json"} <= names
    assert {"report.md", "report.html", "cache.sqlite"} <= names
    found = []
    for secret in (PASSWORD, PLANTED):
        for path in written:
            if secret.encode() in path.read_bytes():
                found.append(f"{path}: {secret}")
        found += [f"{name}: {secret}" for name, text in outputs.items() if secret in text]
    assert found == []
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    # the model is named without its endpoint, and the endpoint is recorded masked
    assert manifest["models"] == ["openai:fake"]  # `http` is a transport option
    [endpoint] = manifest["endpoints"].values()
    assert endpoint.endswith(url.split("@")[1]) and PASSWORD not in endpoint


def _files_holding(folder: Path, secret: str) -> list[str]:
    """Files under `folder` (hidden ones and the lock's included) whose bytes hold `secret`."""
    return [str(p) for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def _wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_password_in_a_url_reaches_the_server_and_no_file_while_running_killed_or_failed(
    tmp_path,
):
    """The default client sends the URL's credentials; the run folder holds no trace of them
    while the eval runs (the lock's holder line included), after a SIGKILL, after the resume,
    and in a profile that stops early (its manifest named the raw spec)."""
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 30)
    env = cli_env(tmp_path / "cache.sqlite")
    run_dir = tmp_path / "run"
    with FakeChatServer(basic_auth=("user", PASSWORD), delay=0.1) as server:
        url = server.base_url.replace("http://", f"http://user:{PASSWORD}@")
        command = eval_command(dataset, url, run_dir, concurrency=2, timeout=5)
        running = subprocess.Popen(
            command, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            _wait_for(lambda: server.stats()["counts"].get("answered", 0) >= 6)
            holder = (run_dir / ".lock.pid").read_text(encoding="utf-8")
            during = _files_holding(run_dir, PASSWORD)
        finally:
            running.kill()
        output = b"".join(running.communicate())
        assert (run_dir / ".lock.pid").exists()  # a SIGKILL leaves the holder's line
        after_kill = _files_holding(run_dir, PASSWORD)
        resumed = run_cli(command, env, tmp_path)
        received = dict(server.authorizations)
    assert "http://***@127.0.0.1" in holder and PASSWORD not in holder
    assert during == [] and after_kill == [] and PASSWORD.encode() not in output
    assert resumed.returncode == 0, resumed.stderr
    assert _files_holding(run_dir, PASSWORD) == []
    assert PASSWORD not in resumed.stdout + resumed.stderr
    assert list(received) == [BasicAuth("user", PASSWORD).encode()]  # every request carried it

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"suite: s\nentries:\n  cpg:\n    build: {{recipe: cpg, source: {EXAMPLE_TABLE}}}\n"
        "    limit: 2\ncompetences:\n  c: [SINGLE-T]\n",
        encoding="utf-8",
    )
    profile = tmp_path / "profile"
    failed = run_cli(
        [sys.executable, "-m", "gramagents", "profile", "--suite", str(suite),
         "--model", f"openai:fake@http://user:{PASSWORD}@127.0.0.1:9/v1", "--run-dir",
         str(profile)],
        env,
        tmp_path,
    )  # fmt: skip
    assert failed.returncode == 2 and "cannot reach" in failed.stderr
    manifest = json.loads((profile / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "partial" and manifest["models"] == ["openai:fake"]
    assert _files_holding(profile, PASSWORD) == []
    assert PASSWORD not in failed.stdout + failed.stderr
