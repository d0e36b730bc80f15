"""Credentials are used and never written: an API key given by environment variable, a
password in a server's URL and a key given as a spec option are in no run folder, cache, log,
report or viewer, nor in the command's output, whether the run succeeds or fails."""

import json
import sys
from pathlib import Path

import pytest

from gramagents.testing.drills import cli_env, eval_command, run_cli, write_drill_dataset
from gramagents.testing.openai_server import FakeChatServer

from .conftest import ROOT
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
        spec = f"openai:fake@{url}?http=httpx"  # httpx sends the URL's userinfo along
        runs = {
            "eval": [*eval_command(dataset, url, tmp_path / "run")[:6], spec, "--run-dir",
                     str(tmp_path / "run")],
            "aiohttp": eval_command(dataset, url, tmp_path / "refused"),  # the default client
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
    assert codes == {"eval": 0, "aiohttp": 2, "option": 2, "view": 0, "report": 0}, outputs
    assert "***@" in outputs["aiohttp stderr"] and "api_key=***" in outputs["option stderr"]
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
