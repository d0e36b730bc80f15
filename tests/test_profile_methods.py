"""Profiles that adapt to the model: each competence measured by the first method the suite
accepts that the model supports, said in the profile; a competence no method measures is
"not measured" with the reason; models measured by different methods are not compared."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gramagents.errors import InputError
from gramagents.models.registry import BACKENDS
from gramagents.models.scripted import ScriptedBackend
from gramagents.profiles.compute import Settings
from gramagents.profiles.run import ProfileOptions, run_profile
from gramagents.profiles.suite import load_suite
from gramagents.testing.openai_server import FakeChatServer, last_user_text

from .conftest import EXAMPLE_TABLE, ROOT
from .test_cli import gramagents
from .test_pair_choice import CLIMP, CLIMP_PAIRS, LengthScorer

ScriptedBackend.register("first", lambda request: "1")


def chat_only(body: dict[str, Any]) -> str:
    """A chat model that answers "1", and as a judge gives every dimension 0."""
    text = last_user_text(body)
    if "Grade the answer below with the rubric" in text:
        keys = re.findall(r'^\s*("[^"]+"): <score from 0 to \d+>', text, re.MULTILINE)
        return json.dumps({**{json.loads(k): 0 for k in keys}, "total": 0, "reason": "none"})
    return "1"


@pytest.fixture
def scorer():
    BACKENDS.register("lengthscorer", LengthScorer, listed=False)
    yield "lengthscorer:first"
    BACKENDS.unregister("lengthscorer")


def suite_file(tmp: Path, acceptability: str) -> Path:
    path = tmp / "suite.yaml"
    path.write_text(
        f"""\
suite: small
entries:
  cpg:
    build: {{recipe: cpg, source: {EXAMPLE_TABLE}}}
    limit: 10
  climp:
    dataset: {{path: {CLIMP}, format: climp}}
    point_key: paradigm
competences:
  recognition: [SINGLE-T]
  acceptability: {acceptability}
""",
        encoding="utf-8",
    )
    return path


def profile(tmp: Path, suite: Path, models: list[str], name: str = "p"):
    options = ProfileOptions(
        suite=str(suite), models=models, run_dir=tmp / name, settings=Settings(boot=100, seed=1)
    )
    return asyncio.run(run_profile(options))


def test_zh_pedagogy_profiles_a_chat_only_model_with_its_pairs_asked_as_a_forced_choice(
    tmp_path: Path,
):
    """Must show 3: the one-command profile of a model without prompt log-probabilities."""
    with FakeChatServer(responder=chat_only) as server:
        url = server.base_url
        result = gramagents(
            "profile",
            "--suite",
            "zh-pedagogy",
            "--model",
            f"openai:M@{url}",
            "--judge",
            f"openai:J@{url}",
            "--run-dir",
            str(tmp_path / "p"),
            cwd=ROOT,
            timeout=600,
        )
    assert result.returncode == 0, result.stderr
    assert "openai:M: recognition " in result.stdout and "acceptability 0.00" in result.stdout
    assert "openai:M: acceptability measured by forced choice" in result.stdout
    data = json.loads((tmp_path / "p" / "profile.json").read_text(encoding="utf-8"))
    assert data["methods"]["openai:M"]["acceptability"]["method"] == "choice"
    block = data["competences"]["openai:M"]["acceptability"]
    assert list(block["tasks"]) == ["CLIMP-CHOICE"] and block["n"] == CLIMP_PAIRS
    assert block["score"] == 0.5 and block["random"] == 0.5  # "1" every time: chance
    assert data["suite"]["methods"] == {"acceptability": ["loglik", "choice"]}
    report = (tmp_path / "p" / "report.md").read_text(encoding="utf-8")
    assert "| openai:M | acceptability | forced choice | 0.000" in report
    page = (tmp_path / "p" / "report.html").read_text(encoding="utf-8")
    assert "forced choice" in page


def test_a_competence_no_accepted_method_measures_is_not_measured_and_the_rest_is_profiled(
    tmp_path: Path,
):
    suite = suite_file(tmp_path, "[CLIMP]")  # the list form: log-probabilities only
    result = profile(tmp_path, suite, ["scripted:first"])
    assert result.manifest.status == "complete"
    chosen = result.data["methods"]["scripted:first"]["acceptability"]
    assert chosen["method"] is None
    assert "accepts log-probability only" in chosen["reason"]
    assert "no log-probabilities" in chosen["reason"]
    assert result.data["competences"]["scripted:first"]["acceptability"] is None
    assert result.data["competences"]["scripted:first"]["recognition"]["n"] == 10
    (climp,) = result.manifest.entries["climp"]["evals"]
    assert climp["eval"] is None and "no item is left to ask" in climp["skipped"]
    assert not (tmp_path / "p" / "evals" / "climp").exists()
    report = (tmp_path / "p" / "report.md").read_text(encoding="utf-8")
    assert "| scripted:first | acceptability | not measured: the suite accepts" in report


def test_models_measured_by_different_methods_are_not_compared_on_that_competence(
    tmp_path: Path, scorer: str
):
    suite = suite_file(tmp_path, "{tasks: [CLIMP], methods: [loglik, choice]}")
    result = profile(tmp_path, suite, [scorer, "scripted:first"])
    methods = result.data["methods"]
    assert methods[scorer.replace(":first", ":first")]["acceptability"]["method"] == "loglik"
    assert methods["scripted:first"]["acceptability"]["method"] == "choice"
    folders = sorted(p.name for p in (tmp_path / "p" / "evals").iterdir())
    assert folders == ["climp", "climp+choice", "cpg", "cpg+choice"]
    (pair,) = result.data["paired"]
    refused = {(r["kind"], r["name"]): r["why"] for r in pair["refused"]}
    assert set(refused) == {("competence", "acceptability"), ("task", "CLIMP / CLIMP-CHOICE")}
    assert (
        "A was measured by log-probability (CLIMP), B by forced choice (CLIMP-CHOICE)"
        in (refused["competence", "acceptability"])
    )
    compared = {(r["kind"], r["name"]) for r in pair["rows"]}
    assert compared == {("competence", "recognition"), ("task", "SINGLE-T")}
    report = (tmp_path / "p" / "report.md").read_text(encoding="utf-8")
    assert "- competence acceptability: not compared. A was measured by log-probability" in report
    # `gramagents report A B` on the two evals refuses the same way
    a, b = tmp_path / "p" / "evals" / "climp", tmp_path / "p" / "evals" / "climp+choice"
    shown = gramagents("report", str(a), str(b), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "- task CLIMP / CLIMP-CHOICE: not compared. A was measured by log-probability" in (
        shown.stdout
    )


def test_shipped_suites_accept_both_methods_for_minimal_pairs():
    for name in ("zh-pedagogy", "cpg-eval-release", "en-syntax", "minimal-pairs-release"):
        suite, _ = load_suite(name)
        assert suite.methods() == {"acceptability": ["loglik", "choice"]}, name
        counted = suite.counted()["acceptability"]
        assert all(f"{t}-CHOICE" in counted for t in suite.competences["acceptability"].tasks)


@pytest.mark.parametrize(
    ("competence", "line", "words"),
    [
        ("{tasks: [CLIMP], methods: [loglik, prompt]}", 11, ["methods", "'loglik' or 'choice'"]),
        ("{tasks: [CLIMP], methods: [choice, choice]}", 11, ["methods", "names a method twice"]),
        ("{tasks: [CLIMP-CHOICE]}", 11, ["tasks[0]", "forced-choice form of CLIMP"]),
        ("{tasks: [CLIMP], methods: [choise]}", 11, ["methods"]),
        ("{tasks: [CLIMP], method: [choice]}", 11, ["unknown key", "did you mean 'methods'"]),
    ],
)
def test_a_bad_competence_is_one_line_naming_file_line_and_field(
    tmp_path: Path, competence, line, words
):
    path = suite_file(tmp_path, competence)
    with pytest.raises(InputError) as caught:
        load_suite(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}:") and "\n" not in message, message
    for word in words:
        assert word in message, message


def test_methods_for_a_competence_without_minimal_pairs_are_refused(tmp_path: Path):
    path = suite_file(tmp_path, "[CLIMP]")
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "recognition: [SINGLE-T]", "recognition: {tasks: [SINGLE-T], methods: [choice]}"
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r":10: field 'competences.recognition.methods'"):
        load_suite(str(path))
