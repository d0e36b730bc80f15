"""An API key given by environment variable is used and never written: not in run folders,
caches, logs, reports or the command's output, whether the run succeeds or fails."""

import json
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
