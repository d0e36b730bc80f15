"""The README's main job on the embedded model, and the agents on the embedded model."""

import json
import re
import subprocess
import sys

import pytest

from gramagents.recipes.cpg.table import read_grammar_table

from .conftest import EXAMPLE_TABLE, ROOT

pytestmark = pytest.mark.slow


def gramagents(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "gramagents", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_main_job_reports_smollm2_on_single_t_and_single_f(tmp_path):
    build = gramagents(
        "build",
        "cpg",
        "--source",
        str(EXAMPLE_TABLE),
        "--agents",
        "off",
        "--run-dir",
        "runs/example-build",
        cwd=tmp_path,
    )
    assert build.returncode == 0, build.stderr
    result = gramagents(
        "eval", "runs/example-build", "--run-dir", "runs/example-eval", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "report: runs/example-eval/report.md"
    report = (tmp_path / "runs" / "example-eval" / "report.md").read_text(encoding="utf-8")
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| task | metric |"))
    columns = [c.strip() for c in lines[start].strip("|").split("|")]
    assert columns == ["task", "metric", "RANDOM", "smollm2", "smollm2 invalid"]  # 8 tasks: rows
    assert "## CPG-EVAL Table 3 layout" in report
    for task in ("SINGLE-T", "SINGLE-F"):
        row = next(line for line in lines[start:] if line.startswith(f"| {task} |"))
        values = dict(zip(columns, [c.strip() for c in row.strip("|").split("|")], strict=True))
        for column in ("smollm2", "smollm2 invalid"):
            assert re.fullmatch(r"[01]\.\d{3}", values[column])
            assert 0.0 <= float(values[column]) <= 1.0
    manifest = json.loads((tmp_path / "runs" / "example-eval" / "manifest.json").read_text())
    assert manifest["counts"]["items"] == 572 and manifest["status"] == "complete"


SMALL_RECIPE_CHANGES = {"per_point: 10": "per_point: 3", "sample: 10": "sample: 2"}


def test_agents_on_the_embedded_model_record_every_outcome(tmp_path):
    recipe = (ROOT / "graphs" / "cpg.yaml").read_text(encoding="utf-8")
    for old, new in SMALL_RECIPE_CHANGES.items():
        assert old in recipe
        recipe = recipe.replace(old, new)
    (tmp_path / "small.yaml").write_text(recipe, encoding="utf-8")
    result = gramagents(
        "build",
        "small.yaml",
        "--source",
        str(EXAMPLE_TABLE),
        "--limit",
        "3",
        "--run-dir",
        "b",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    stages = manifest["stages"]
    points = read_grammar_table(EXAMPLE_TABLE)[:3]
    examples = sum(len(p.examples) for p in points)
    assert stages["rewrite"]["planned"] == examples
    assert stages["rewrite"].get("rewritten", 0) + stages["rewrite"].get("failed", 0) == examples
    for stage, made in (("backcheck", "rewrite"), ("confuser-check", "confusers")):
        checked = stages.get(stage, {"planned": 0})
        outcomes = sum(checked.get(k, 0) for k in ("accepted", "rejected", "failed"))
        produced = stages[made].get("rewritten", 0) + stages[made].get("generated", 0)
        assert outcomes == checked["planned"] == produced
    assert stages["confusers"]["planned"] == sum(max(0, 3 - len(p.confusers)) for p in points)
    instances = [
        json.loads(x) for x in (tmp_path / "b" / "instances.jsonl").read_text().splitlines()
    ]
    for instance in instances:
        if instance["origin"] == "agent" and instance["status"] in ("accepted", "rejected"):
            [check] = instance["provenance"]["checks"]
            assert check["model"] == "smollm2" and check["reason"]
    report = (tmp_path / "b" / "report.md").read_text()
    assert "| confuser-check |" in report and "| backcheck |" in report
    review = tmp_path / "b" / "review.csv"
    if review.exists():  # the file round-trips: importing it unchanged changes nothing
        before = (tmp_path / "b" / "dataset.jsonl").read_bytes()
        imported = gramagents("review", "b", str(review), cwd=tmp_path)
        assert imported.returncode == 0, imported.stderr
        assert (tmp_path / "b" / "dataset.jsonl").read_bytes() == before
