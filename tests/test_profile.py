"""`gramagents profile` end to end with scripted models, suites, and `gramagents report A B`."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from gramagents.errors import InputError, RunError
from gramagents.models.scripted import ScriptedBackend
from gramagents.profiles.compute import Settings
from gramagents.profiles.run import ProfileOptions, run_profile
from gramagents.profiles.suite import load_suite

from .conftest import EXAMPLE_TABLE, ROOT
from .test_cli import assert_user_error, gramagents

ScriptedBackend.register("says-true", lambda request: "T")
ASKED: Counter[str] = Counter()
"""Requests each scripted model answered (the response cache answers the others)."""


def _says(answer: str):
    def respond(request) -> str:
        ASKED[answer] += 1
        return answer

    return respond


ScriptedBackend.register("says-false", _says("F"))

SUITE = f"""\
suite: planted
description: Two competences a model that always says T gets right and wrong.
entries:
  cpg:
    build: {{recipe: cpg, source: {EXAMPLE_TABLE}}}
    limit: 40
competences:
  holds: [SINGLE-T]
  absent: [SINGLE-F]
"""


def _profile(
    tmp: Path, models: list[str], name: str, source: Path = EXAMPLE_TABLE, use_cache: bool = True
) -> Path:
    suite = tmp / "planted.yaml"
    suite.write_text(SUITE.replace(str(EXAMPLE_TABLE), str(source)), encoding="utf-8")
    options = ProfileOptions(
        suite=str(suite),
        models=models,
        run_dir=tmp / name,
        settings=Settings(boot=500, seed=1),
        use_cache=use_cache,
    )
    result = asyncio.run(run_profile(options))
    assert result.manifest.status == "complete"
    return result.folder.path


def test_a_profile_scores_each_competence_of_scripted_models(in_tmp: Path):
    folder = _profile(in_tmp, ["scripted:says-true", "scripted:says-false"], "both")
    data = json.loads((folder / "profile.json").read_text(encoding="utf-8"))
    yes, no = data["competences"]["scripted:says-true"], data["competences"]["scripted:says-false"]
    assert yes["holds"]["corrected"]["value"] == 1.0  # always right: RANDOM 0.5 -> 1.0
    assert yes["absent"]["corrected"]["value"] == -1.0  # always wrong: below chance
    assert no["holds"]["corrected"]["value"] == -1.0
    assert yes["holds"]["n"] == 40 and yes["holds"]["tasks"]["SINGLE-T"]["random"] == 0.5
    (pair,) = data["paired"]
    rows = {(r["kind"], r["name"]): r for r in pair["rows"]}
    assert rows["task", "SINGLE-T"]["difference"]["value"] == 1.0
    assert rows["task", "SINGLE-T"]["p_holm"] < 0.001
    weakest = [p["corrected"] for p in data["weakest"]["scripted:says-true"]]
    assert weakest == sorted(weakest) and weakest[0] < 0  # points asked most in SINGLE-F
    report = (folder / "report.md").read_text(encoding="utf-8")
    for heading in ("## Competences", "## Weakest grammar points", "## Paired comparison"):
        assert heading in report
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "Weakest grammar points" in page and 'href="evals/cpg/report.html#item=SINGLE-' in page
    assert (folder / "evals" / "cpg" / "report.html").is_file()


def test_report_of_two_profiles_prints_the_paired_comparison(in_tmp: Path):
    a = _profile(in_tmp, ["scripted:says-true"], "a")
    b = _profile(in_tmp, ["scripted:says-false"], "b")
    asked = ASKED["F"]
    assert asked > 0
    # resumed without the response cache: a request made again would reach the model
    again = _profile(in_tmp, ["scripted:says-false"], "b", use_cache=False)
    assert again == b
    assert ASKED["F"] == asked
    manifest = json.loads((b / "evals" / "cpg" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["requests_sent"] == 0
    result = gramagents("report", str(a), str(b), cwd=in_tmp)
    assert result.returncode == 0, result.stderr
    assert "### scripted:says-true − scripted:says-false (80 items)" in result.stdout
    assert "p (Holm)" in result.stdout
    assert "| competence | holds | 40 |" in result.stdout
    evals = gramagents("report", str(a / "evals" / "cpg"), str(b / "evals" / "cpg"), cwd=in_tmp)
    assert evals.returncode == 0, evals.stderr
    assert "| scripted:says-true | 1.000" in evals.stdout  # the side-by-side table, then
    assert "### scripted:says-true − scripted:says-false (80 items)" in evals.stdout
    row = r"| task | SINGLE-T | 40 | 1.000 \[1.000, 1.000\] | 40 / 0 | \<0.001 | \<0.001 |"
    assert row in evals.stdout  # markdown-escaped cells


def test_a_profile_refuses_a_build_folder_of_an_edited_source(in_tmp: Path):
    source = in_tmp / "points.jsonl"
    lines = EXAMPLE_TABLE.read_text(encoding="utf-8").splitlines(keepends=True)
    source.write_text("".join(lines), encoding="utf-8")
    folder = _profile(in_tmp, ["scripted:says-true"], "p", source)
    built = (folder / "builds" / "cpg" / "dataset.jsonl").read_text(encoding="utf-8")
    source.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    with pytest.raises(RunError) as caught:
        _profile(in_tmp, ["scripted:says-true"], "p", source)
    assert str(folder / "builds" / "cpg") in str(caught.value)
    assert "source" in str(caught.value) and "\n" not in str(caught.value)
    assert (folder / "builds" / "cpg" / "dataset.jsonl").read_text(encoding="utf-8") == built


def test_every_shipped_suite_loads_and_names_known_tasks():
    names = sorted(p.stem for p in (ROOT / "suites").glob("*.yaml"))
    assert {"zh-pedagogy", "en-syntax"} <= set(names)
    for name in names:
        suite, _ = load_suite(name)
        assert suite.competences, name


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "suite: s\nentries:\n  a:\n    dataset: {path: x}\n    limt: 3\ncompetences:\n"
            "  r: [SINGLE-T]\n",
            [":5:", "unknown key", "limit"],
        ),
        (
            "suite: s\nentries:\n  a:\n    dataset: {path: x}\ncompetences:\n  r: [SINGLE-T]\n"
            "  d: [SINGLE-T]\n",
            [":7:", "already in the competence 'r'"],
        ),
        (
            "suite: s\nentries:\n  a:\n    dataset: {path: x}\ncompetences:\n  r: [EDU-ESSAY]\n",
            [":6:", "rmse"],
        ),
    ],
)
def test_a_bad_suite_is_one_line_naming_file_line_and_field(tmp_path: Path, text, words):
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_suite(str(path))
    message = str(caught.value)
    assert message.startswith(str(path))
    for word in words:
        assert word in message


def test_the_command_refuses_an_entry_without_its_source(tmp_path: Path):
    result = gramagents("profile", "--suite", "edueval-release", "--model", "smollm2", cwd=tmp_path)
    assert_user_error(result, tmp_path, "edueval-release.yaml:9:", "--source edueval=PATH")


@pytest.mark.slow
def test_the_shipped_en_syntax_suite_profiles_the_embedded_model(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(ROOT)  # the suite reads examples/ from the repository's folder
    options = ProfileOptions(
        suite="en-syntax",
        models=["smollm2"],
        run_dir=in_tmp / "p",
        limit=1,
        settings=Settings(boot=200),
    )
    result = asyncio.run(run_profile(options))
    assert result.manifest.status == "complete"
    suite, _ = load_suite("en-syntax")
    blocks = result.data["competences"]["smollm2"]
    assert list(blocks) == list(suite.competences)
    assert all(block is not None and block["n"] >= 1 for block in blocks.values())
    assert (in_tmp / "p" / "report.html").is_file()


def test_the_command_fits_threads_as_build_and_eval_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from typer.testing import CliRunner

    from gramagents import cli, cli_profile

    fitted: list[int | None] = []
    monkeypatch.setattr(cli_profile, "apply_threads", fitted.append)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.app, ["profile", "--suite", "no-such-suite", "--threads", "3"])
    assert result.exit_code != 0 and fitted == [3]


GEC_SOURCE = ROOT / "examples" / "gec" / "grammar-items.jsonl"
GEC_SUITE = f"""\
suite: correction
entries:
  gec:
    build: {{recipe: gec, source: {GEC_SOURCE}, limit: 4}}
competences:
  correction: [GEC-GUIDED, GEC-BASELINE]
"""


def test_the_correction_competence_is_the_gec_recipe_s_own_macro_f05(in_tmp: Path):
    from gramagents.workflow.build import BuildOptions, run_build

    built = asyncio.run(
        run_build(
            "gec", BuildOptions(source=GEC_SOURCE, agents=False, limit=4, run_dir=in_tmp / "b")
        )
    )
    golds = {i.prompt.vars["text"]: str(i.answer) for i in built.items if i.task == "GEC-GUIDED"}
    corrected = {text for n, text in enumerate(sorted(golds)) if n % 3}

    def corrects_some(request) -> str:
        """The gold correction of two sentences in three, the others given back unchanged."""
        text = next(t for t in golds if f"\n{t}\n" in request.messages[-1].content)
        return golds[text] if text in corrected else text

    ScriptedBackend.register("corrects-some", corrects_some)
    suite = in_tmp / "correction.yaml"
    suite.write_text(GEC_SUITE, encoding="utf-8")
    options = ProfileOptions(
        suite=str(suite),
        models=["scripted:corrects-some"],
        run_dir=in_tmp / "p",
        settings=Settings(boot=200, seed=1, min_items=2),  # a grammar item: a unit per task
    )
    result = asyncio.run(run_profile(options))
    block = result.data["competences"]["scripted:corrects-some"]["correction"]
    summary = json.loads((in_tmp / "p" / "evals" / "gec" / "summary.json").read_text())
    recipe = {r["task"]: r["score"] for r in summary if r["metric"] == "f0.5"}
    points = {i.meta["point"] for i in built.items if i.task == "GEC-GUIDED"}
    for task in ("GEC-GUIDED", "GEC-BASELINE"):
        assert block["tasks"][task]["score"] == pytest.approx(recipe[task])  # CTSEG's figure
        assert block["tasks"][task]["n"] == len(points)  # one unit per grammar item
    sentences = [
        json.loads(line)
        for line in (in_tmp / "p" / "evals" / "gec" / "scores.jsonl").read_text().splitlines()
    ]
    guided = [s["scores"]["f0.5"] for s in sentences if s["task"] == "GEC-GUIDED"]
    assert sum(guided) / len(guided) != pytest.approx(recipe["GEC-GUIDED"])  # not the item mean
    weakest = result.data["weakest"]["scripted:corrects-some"]
    shown = [e["shown_item"] for p in weakest for e in p["examples"] if e["task"] == "GEC-GUIDED"]
    assert shown and all(s.startswith("GEC-GUIDED/") and "/pair/" in s for s in shown)
