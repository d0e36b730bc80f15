"""SIGKILL an eval and a build with agents at five random points, resume each time with the same
--run-dir: the result is the undisturbed run's, no line is written twice, and no answer that
was recorded before a kill is asked of the server again."""

import json
import sys
from pathlib import Path

import pytest

from gramagents.testing.drills import (
    KillPlan,
    cached_tags,
    check_run,
    cli_env,
    drill_answer,
    eval_command,
    item_of,
    jsonl_lines,
    kill_and_resume,
    recorded_items,
    run_cli,
    tag_of,
    write_drill_dataset,
)
from gramagents.testing.openai_server import FakeChatServer

from .conftest import ROOT

pytestmark = pytest.mark.slow

GEC_ITEMS = ROOT / "examples" / "gec" / "grammar-items.jsonl"


def test_an_eval_killed_five_times_resumes_to_the_undisturbed_scores(tmp_path):
    items = 300
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", items)
    with FakeChatServer(responder=drill_answer, delay=0.01) as server:
        reference = run_cli(
            eval_command(dataset, server.base_url, tmp_path / "reference"),
            cli_env(tmp_path / "reference.sqlite"),
            tmp_path,
        )
        assert reference.returncode == 0, reference.stderr
        server.reset()
        report = kill_and_resume(
            eval_command(dataset, server.base_url, tmp_path / "killed"),
            cli_env(tmp_path / "killed.sqlite"),
            tmp_path,
            server,
            KillPlan(
                kills=5,
                expected_requests=items,
                recorded=lambda: recorded_items(tmp_path / "killed"),
                tag=item_of,
                seed=5,
            ),
        )
        answered = server.stats()["counts"]["answered"]
    assert report.kills == 5
    assert report.last is not None and report.last.returncode == 0, report.last.stderr
    check = check_run(tmp_path / "reference", tmp_path / "killed", items)
    assert (check.status, check.survived, check.duplicated, check.identical) == (
        "complete",
        items,
        0,
        True,
    )
    assert report.asked_again == []
    assert answered <= items + 5 * 8  # at most what was in flight (--concurrency 8) at each kill


def gec_agent(body: dict) -> str:
    """Valid answers for the GEC recipe's agents, each tagged with its request (`tag_of`)."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    tag = tag_of(body)
    if "error_limited_to_item" in text:
        verdict = dict.fromkeys(
            ("error_limited_to_item", "alternatives_complete", "learner_style", "common_error"),
            True,
        )
        return json.dumps({**verdict, "reason": f"one error on the item #{tag}"})
    return json.dumps(
        {
            "ungrammatical": f"He go to school with tag #{tag} today.",
            "correction": f"He goes to school with tag #{tag} today.",
            "alternatives": [],
        }
    )


def build_command(recipe: Path, base_url: str, run_dir: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gramagents",
        "build",
        str(recipe),
        "--source",
        str(GEC_ITEMS),
        "--agent-model",
        f"openai:fake@{base_url}",
        "--run-dir",
        str(run_dir),
    ]


def test_a_build_with_agents_killed_five_times_resumes_to_the_same_dataset(tmp_path):
    recipe = tmp_path / "gec.yaml"
    text = (ROOT / "graphs" / "gec.yaml").read_text(encoding="utf-8")
    recipe.write_text(text.replace("per_item: 3", "per_item: 6"), encoding="utf-8")
    with FakeChatServer(responder=gec_agent, delay=0.02) as server:
        reference = run_cli(
            build_command(recipe, server.base_url, tmp_path / "reference"),
            cli_env(tmp_path / "reference.sqlite"),
            tmp_path,
        )
        assert reference.returncode == 0, reference.stderr
        asked = server.stats()["chat_requests"]
        server.reset()
        cache = tmp_path / "killed.sqlite"
        report = kill_and_resume(
            build_command(recipe, server.base_url, tmp_path / "killed"),
            cli_env(cache),
            tmp_path,
            server,
            KillPlan(
                kills=5,
                expected_requests=asked,
                recorded=lambda: cached_tags(cache),
                tag=tag_of,
                seed=9,
            ),
        )
    assert asked == 14 * 3 * 2  # three pairs more per item, each checked
    assert report.kills == 5
    assert report.last is not None and report.last.returncode == 0, report.last.stderr
    assert report.asked_again == []
    killed, undisturbed = tmp_path / "killed", tmp_path / "reference"
    assert json.loads((killed / "manifest.json").read_text())["status"] == "complete"
    dataset = jsonl_lines(killed / "dataset.jsonl")
    assert dataset == jsonl_lines(undisturbed / "dataset.jsonl")
    assert len(dataset) == len(set(dataset))
    for name in ("instances.jsonl", "m2/index.json"):
        assert (killed / name).read_bytes() == (undisturbed / name).read_bytes()
