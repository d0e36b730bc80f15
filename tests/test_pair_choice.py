"""Minimal pairs asked as a forced choice (`eval --pairs choice`), for models without
log-probabilities: both orders, their own task names, their own report lines, cache and resume
kept apart from the log-probability method."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gramagents.errors import GramagentsError, RunError
from gramagents.models.registry import BACKENDS
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Loglikelihood, LoglikelihoodRequest
from gramagents.scoring.extract import Extraction
from gramagents.scoring.metrics import score_item
from gramagents.sources.datasets import read_dataset
from gramagents.testing.openai_server import FakeChatServer, always, last_user_text
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT

CLIMP = ROOT / "examples" / "minimal-pairs" / "climp"
BLIMP = ROOT / "examples" / "minimal-pairs" / "blimp"
PAIRS = [item.prompt.vars for item in read_dataset(CLIMP, "climp").items]
CLIMP_PAIRS = len(PAIRS)


class LengthScorer(ScriptedBackend):
    """A scripted model that also scores sentences: the shorter, the likelier (no weights)."""

    name = "lengthscorer"
    supports_loglikelihood = True

    async def loglikelihood(self, requests: list[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.stats.requests_sent += len(requests)
        return [
            Loglikelihood(
                logprob=-float(len(r.continuation)),
                mean_logprob=-1.0,
                n_tokens=len(r.continuation),
                greedy=False,
            )
            for r in requests
        ]


@pytest.fixture
def scorer():
    BACKENDS.register("lengthscorer", LengthScorer, listed=False)
    ScriptedBackend.register("first", lambda request: "1")
    yield "lengthscorer:first"
    BACKENDS.unregister("lengthscorer")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def summary_of(folder: Path) -> dict[tuple[str, str], float]:
    return {
        (r["task"], r["metric"]): r["score"]
        for r in json.loads((folder / "summary.json").read_text())
    }


def evaluate(path: Path, folder: Path, models: list[str], fmt: str = "climp", **options: Any):
    return asyncio.run(
        run_eval(path, EvalOptions(models=models, fmt=fmt, run_dir=folder, **options))
    )


# --- reading and scoring ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chosen", "scores"),
    [
        (["good", "good"], (1.0, 1.0, 1.0, 1.0, 1.0)),
        (["good", "bad"], (0.5, 0.0, 1.0, 0.0, 0.0)),  # always the first sentence
        (["bad", "good"], (0.5, 0.0, 0.0, 1.0, 0.0)),  # always the second
        (["bad", "bad"], (0.0, 0.0, 0.0, 0.0, 1.0)),  # consistently wrong
        (["good", None], (0.5, 0.0, 1.0, 0.0, 0.0)),  # one order unread: wrong, not consistent
    ],
)
def test_a_pair_scores_each_order_strictly_and_by_consistency(chosen, scores):
    result = score_item("pair-choice", Extraction(chosen, "both-orders"), "good", {})
    keys = ("acc", "acc_strict", "acc_good_first", "acc_good_second", "consistency")
    assert tuple(result.scores[k] for k in keys) == scores


# --- a model that always answers "1" -----------------------------------------------------------


def test_a_model_that_always_answers_1_scores_chance_strictly_nothing_and_no_consistency(tmp_path):
    """Must show 1 and 2, from the command line: `acc` 0.5 on every task and paradigm,
    `acc_strict` 0, the report stating consistency 0, and the task named apart."""
    with FakeChatServer(responder=always("1")) as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "gramagents",
                "eval",
                str(CLIMP),
                "--format",
                "climp",
                "--pairs",
                "choice",
                "--model",
                f"openai:m@{server.base_url}",
                "--run-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert server.counts["answered"] == 2 * CLIMP_PAIRS  # each pair in both orders
        shown = [last_user_text(body) for body in server.requests]
    folder = tmp_path / "run"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tasks"] == {"CLIMP-CHOICE": CLIMP_PAIRS}
    assert manifest["pairs"] == {"CLIMP": "choice"} and manifest["conditioning"] == {}
    assert manifest["random_baselines"] == {"CLIMP-CHOICE": 0.5}
    assert "prompts/pairs/choice.zh.md" in manifest["hashes"]
    summary = summary_of(folder)
    assert summary["CLIMP-CHOICE", "acc"] == 0.5
    assert summary["CLIMP-CHOICE", "acc_strict"] == 0.0
    assert summary["CLIMP-CHOICE", "acc_good_first"] == 1.0
    assert summary["CLIMP-CHOICE", "acc_good_second"] == 0.0
    assert summary["CLIMP-CHOICE", "consistency"] == 0.0
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Minimal pairs: how each was asked" in report
    assert "CLIMP-CHOICE: **forced choice** (prompt `pairs/choice.zh.md`)" in report
    assert (
        "| RANDOM | CLIMP-CHOICE | forced choice | 0.500 | 0.250 | 0.500 | 0.500 | 0.500 |"
        in report
    )
    assert (
        "| openai:m | CLIMP-CHOICE | forced choice | 0.500 | 0.000 | 1.000 | 0.000 | 0.000 |"
        in report
    )
    assert "Consistency across orders: openai:m 0.000 on CLIMP-CHOICE" in report
    for paradigm in ("anaphor_agreement_gender", "ba_complement", "classifier"):
        assert f"| openai:m | {paradigm} | 0.500 |" in report
    # the prompt is Chinese, and each pair is shown once in each order
    assert all(text.startswith("下面有两个中文句子") for text in shown)
    for pair in PAIRS:
        assert f"1. {pair['good']}\n2. {pair['bad']}" in "\n\n".join(shown)
        assert f"1. {pair['bad']}\n2. {pair['good']}" in "\n\n".join(shown)
    scores = lines(folder / "scores.jsonl")
    assert {tuple(s["extracted"]) for s in scores} == {("good", "bad")}
    assert "Minimal pairs: how each was asked" in (folder / "report.html").read_text("utf-8")
    detail = (folder / "view" / "data" / "run0" / "items" / "detail-0.js").read_text("utf-8")
    assert '"orders":[{"order":"good-first"' in detail  # the viewer shows both prompts
    assert '"choices":[{"order":"good-first","raw":"1"' in detail  # and both replies
    response = lines(folder / "responses.jsonl")[0]
    assert [c["order"] for c in response["choices"]] == ["good-first", "good-second"]
    assert [c["chose"] for c in response["choices"]] == ["good", "bad"]


def test_the_two_methods_name_their_tasks_apart_and_share_no_cache_entry(tmp_path, scorer):
    """Must show 2: a log-probability run and a forced-choice run of the same pairs."""
    loglik = evaluate(CLIMP, tmp_path / "loglik", [scorer])
    choice = evaluate(CLIMP, tmp_path / "choice", [scorer], pairs="choice")
    assert set(loglik.manifest.tasks) == {"CLIMP"}
    assert set(choice.manifest.tasks) == {"CLIMP-CHOICE"}
    assert loglik.manifest.pairs == {"CLIMP": "loglik"}
    assert choice.manifest.pairs == {"CLIMP": "choice"}
    assert choice.manifest.counts.cache_hits == 0  # the same pairs, asked another way
    assert choice.manifest.counts.requests_sent == 2 * CLIMP_PAIRS
    ids = {s["item_id"] for s in lines(tmp_path / "loglik" / "scores.jsonl")}
    assert ids == {s["item_id"] for s in lines(tmp_path / "choice" / "scores.jsonl")}
    assert {
        row["task"] for row in json.loads((tmp_path / "loglik" / "summary.json").read_text())
    } == {"CLIMP"}
    again = evaluate(CLIMP, tmp_path / "again", [scorer], pairs="choice")
    assert again.manifest.counts.requests_sent == 0  # both orders of every pair cached
    report = (tmp_path / "loglik" / "report.md").read_text(encoding="utf-8")
    assert "CLIMP: **log-probability**, conditioning `bare`" in report


def test_a_folder_asked_one_way_is_not_resumed_the_other(tmp_path, scorer):
    folder = tmp_path / "run"
    evaluate(CLIMP, folder, [scorer])
    with pytest.raises(RunError, match=r"pairs/CLIMP \(loglik -> choice\)"):
        evaluate(CLIMP, folder, [scorer], pairs="choice")
    result = evaluate(CLIMP, folder, [scorer], pairs="choice", resume_changed="reask")
    assert result.manifest.status == "complete"
    assert result.manifest.counts.requests_sent == 2 * CLIMP_PAIRS  # asked again, not skipped
    assert {s["task"] for s in lines(folder / "scores.jsonl")} == {"CLIMP-CHOICE"}
    assert result.manifest.conditioning == {}  # the log-probability records were set aside
    with pytest.raises(RunError, match=r"pairs/CLIMP \(choice -> loglik\)"):
        evaluate(CLIMP, folder, [scorer])


def test_pairs_loglik_on_a_chat_only_model_stops_with_one_line_naming_pairs_choice(tmp_path):
    ScriptedBackend.register("first", lambda request: "1")
    with pytest.raises(GramagentsError) as raised:
        evaluate(CLIMP, tmp_path / "run", ["scripted:first"])
    message = str(raised.value)
    assert "CLIMP compare log-likelihoods" in message and "--pairs choice" in message
    assert "\n" not in message and not (tmp_path / "run").exists()
    result = evaluate(CLIMP, tmp_path / "run", ["scripted:first"], pairs="choice")
    assert result.manifest.status == "complete"


def test_conditioning_and_an_unknown_method_are_refused_with_one_line(tmp_path, scorer):
    with pytest.raises(GramagentsError, match="--conditioning: minimal pairs asked as a forced"):
        evaluate(CLIMP, tmp_path / "a", [scorer], pairs="choice", conditioning="bare")
    with pytest.raises(GramagentsError, match="--pairs: 'prompt' is not one of loglik, choice"):
        evaluate(CLIMP, tmp_path / "b", [scorer], pairs="prompt")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_blimp_pairs_are_asked_in_english(tmp_path):
    with FakeChatServer(responder=always("2")) as server:
        result = evaluate(
            BLIMP, tmp_path / "run", [f"openai:m@{server.base_url}"], fmt="blimp", pairs="choice"
        )
        shown = [last_user_text(body) for body in server.requests]
    assert set(result.manifest.tasks) == {"BLIMP-CHOICE"}
    assert all(text.startswith("Here are two English sentences.") for text in shown)
    summary = summary_of(tmp_path / "run")
    assert summary["BLIMP-CHOICE", "acc"] == 0.5
    assert summary["BLIMP-CHOICE", "acc_good_second"] == 1.0


def test_a_reply_unread_in_one_order_makes_the_pair_invalid_but_keeps_the_other(tmp_path):
    bad = {pair["bad"] for pair in PAIRS}

    def answer(body: dict[str, Any]) -> str:  # refuses whenever the bad sentence comes first
        first = next(x for x in last_user_text(body).splitlines() if x.startswith("1. "))
        return "我无法判断哪个句子合乎语法" if first[3:] in bad else "1"

    with FakeChatServer(responder=answer) as server:
        evaluate(CLIMP, tmp_path / "run", [f"openai:m@{server.base_url}"], pairs="choice")
    scores = lines(tmp_path / "run" / "scores.jsonl")
    assert all(s["invalid"] and s["invalid_reason"] == "refusal" for s in scores)
    assert {tuple(s["extracted"]) for s in scores} == {("good", None)}
    assert {s["scores"]["acc"] for s in scores} == {0.5}
    assert {s["scores"]["consistency"] for s in scores} == {0.0}


@pytest.mark.slow
def test_the_embedded_model_is_asked_both_orders_and_every_reply_is_read_or_has_a_reason(
    tmp_path,
):
    result = evaluate(CLIMP, tmp_path / "run", ["smollm2"], pairs="choice", limit=3)
    assert result.manifest.status == "complete" and result.manifest.tasks == {"CLIMP-CHOICE": 3}
    for response in lines(tmp_path / "run" / "responses.jsonl"):
        assert [c["order"] for c in response["choices"]] == ["good-first", "good-second"]
        for choice in response["choices"]:
            assert choice["raw"]  # a real reply, read or invalid with its reason
            assert (choice["extracted"] in ("1", "2")) != (choice["invalid_reason"] is not None)
