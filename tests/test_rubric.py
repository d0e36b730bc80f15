"""Rubric files: the packaged EduEval rubrics, malformed files, the judgment model, the CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from gramagents.errors import GramagentsError, InputError
from gramagents.judging.rubric import (
    JUDGE_PROMPT,
    find_rubric,
    judge_messages,
    judgment_model,
    load_rubric,
)
from gramagents.templates import load_prompt

from .conftest import ROOT

# The paper's tables (EduEval, Tables 12, 13 and 22): dimension, points, sub-criteria with points.
PAPER = {
    "question-generation": [
        (
            "Accuracy and Clarity",
            20,
            [
                ("Content alignment with subject knowledge", 10),
                ("Clear and unambiguous phrasing", 10),
            ],
        ),
        (
            "Educational Value",
            20,
            [("Core concept coverage", 10), ("Cognitive demand (e.g., Bloom's levels)", 10)],
        ),
        (
            "Task Design Quality",
            30,
            [
                ("Appropriate question format", 10),
                ("Realistic and engaging context", 10),
                ("Depth and integrative reasoning", 10),
            ],
        ),
        (
            "Difficulty and Challenge",
            20,
            [("Proper difficulty gradient", 10), ("Opportunities for divergent thinking", 10)],
        ),
        (
            "Originality and Utility",
            10,
            [("Novel framing or perspective", 5), ("Practical instructional usefulness", 5)],
        ),
    ],
    "text-writing": [
        ("Language Accuracy", 20, [("Grammar correctness", 10), ("Vocabulary precision", 10)]),
        (
            "Content Quality",
            30,
            [
                ("Richness and specificity", 10),
                ("Coherence and flow", 10),
                ("Thematic depth", 10),
            ],
        ),
        (
            "Creativity and Thinking",
            30,
            [
                ("Originality and novel expression", 10),
                ("Critical thinking and perspective", 10),
                ("Emotional resonance", 10),
            ],
        ),
        (
            "Structure and Format",
            20,
            [("Complete essay structure", 10), ("Formatting and conventions", 10)],
        ),
    ],
    "teaching-design": [
        (
            "Teaching Objectives (Clarity, Suitability)",
            20,
            [
                ("Clear articulation of learning goals", 10),
                ("Alignment with standards and student level", 10),
            ],
        ),
        (
            "Content Accuracy and Relevance",
            20,
            [("Alignment with subject knowledge", 10), ("Support for stated objectives", 10)],
        ),
        (
            "Teaching Methods (Variety, Fit)",
            20,
            [
                ("Use of diverse, learner-centered strategies", 10),
                ("Appropriateness for content and learners", 10),
            ],
        ),
        (
            "Instructional Flow and Coherence",
            20,
            [
                ("Logical sequencing of activities", 10),
                ("Complete stages (intro, practice, summary)", 10),
            ],
        ),
        (
            "Resource Use",
            10,
            [("Richness and suitability of teaching aids", 5), ("Match with teaching needs", 5)],
        ),
        (
            "Assessment Design",
            10,
            [("Diverse and valid evaluation strategies", 5), ("Process and outcome balance", 5)],
        ),
        (
            "Innovation and Feasibility",
            10,
            [
                ("Novelty and classroom applicability", 5),
                ("Realistic timing and resource constraints", 5),
            ],
        ),
    ],
}
TASKS = {
    "question-generation": "question_generation",
    "text-writing": "text_writing",
    "teaching-design": "teaching_design",
}


@pytest.mark.parametrize("rubric_id", sorted(PAPER))
def test_packaged_rubrics_are_the_papers_tables(rubric_id):
    rubric = find_rubric(rubric_id)
    assert rubric.id == rubric_id
    assert rubric.task == TASKS[rubric_id]
    assert rubric.path.name == f"{rubric_id}.md"
    got = [
        (d.name, d.points, [c.rsplit(" (", 1)[0] for c in d.criteria]) for d in rubric.dimensions
    ]
    assert got == [(n, p, [c for c, _ in cs]) for n, p, cs in PAPER[rubric_id]]
    for dim, (_, _, criteria) in zip(rubric.dimensions, PAPER[rubric_id], strict=True):
        assert dim.criteria == tuple(f"{c} ({p})" for c, p in criteria)
    # the points add up to the scale's maximum: 100, except Table 22, which prints "Total 100"
    # but whose points add up to 110 (kept as printed)
    assert sum(d.points for d in rubric.dimensions) == rubric.scale[1]
    assert rubric.scale == ((0.0, 110.0) if rubric_id == "teaching-design" else (0.0, 100.0))
    # the body shows people the same table
    for name, points, criteria in PAPER[rubric_id]:
        assert f"| **{name}** | **{points}** |" in rubric.body
        for criterion, sub_points in criteria:
            assert f"| {criterion} | {sub_points} |" in rubric.body
    assert f"| **Total** | **{int(rubric.scale[1])}** |" in rubric.body
    assert not rubric.body.startswith("---")
    assert len(rubric.hash) == 64


def test_rubric_by_path_and_user_override(tmp_path, monkeypatch):
    packaged = ROOT / "rubrics" / "text-writing.md"
    assert find_rubric(str(packaged)).hash == find_rubric("text-writing").hash
    edited = packaged.read_text(encoding="utf-8").replace("version: 1", "version: 2")
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "text-writing.md").write_text(edited, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    local = find_rubric("text-writing")
    assert local.version == "2"
    assert local.hash != load_rubric(packaged).hash
    with pytest.raises(GramagentsError, match="available: .*text-writing"):
        find_rubric("no-such-rubric")
    with pytest.raises(InputError, match="file not found"):
        find_rubric("missing/rubric.md")


GOOD = """---
id: demo
version: 1
task: demo_task
scale: [0, 100]
dimensions:
  - name: Accuracy
    points: 60
    criteria:
      - Right facts (30)
      - Right terms (30)
  - name: Style
    points: 40
---
Body text.
"""


def _error(tmp_path: Path, text: str) -> InputError:
    path = tmp_path / "r.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_rubric(path)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(str(path))
    return caught.value


def test_a_good_rubric_loads(tmp_path):
    path = tmp_path / "r.md"
    path.write_bytes(("\ufeff" + GOOD).replace("\n", "\r\n").encode())
    rubric = load_rubric(path)
    assert [d.name for d in rubric.dimensions] == ["Accuracy", "Style"]
    assert [d.line for d in rubric.dimensions] == [7, 12]
    assert rubric.body == "Body text."
    assert rubric.version == "1"


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "words"),
    [
        ("points: 40", "points: 35", 6, "dimensions", ["sum to 95", "scale max is 100"]),
        ("name: Style", "name: accuracy", 12, "name", ["duplicate dimension", "first at line 7"]),
        ("points: 40", "points: forty", 13, "points", ["'Style'", "'forty'"]),
        ("points: 40", "points: true", 13, "points", ["number"]),
        ("scale: [0, 100]", "scale: [0, 100", 6, None, ["invalid YAML"]),
        ("  - name: Style", " - name: Style", 12, None, ["invalid YAML"]),
        ("task: demo_task\n", "", 1, "task", ["missing"]),
        ("id: demo", "id: ", 2, "id", ["missing"]),
        ("scale: [0, 100]", "scale: [100, 0]", 5, "scale", ["min < max"]),
        ("Right terms (30)", "Right terms (20)", 9, "criteria", ["sum to 50", "60"]),
        ("name: Style", "name: total", 12, "name", ["reserved"]),
    ],
)
def test_malformed_rubrics_name_line_and_field(tmp_path, old, new, line, field, words):
    assert old in GOOD
    error = _error(tmp_path, GOOD.replace(old, new, 1))
    assert (error.line, error.field) == (line, field), str(error)
    for word in words:
        assert word in str(error)


def test_empty_dimension_list(tmp_path):
    text = GOOD[: GOOD.index("dimensions:")] + "dimensions: []\n---\nbody\n"
    error = _error(tmp_path, text)
    assert (error.line, error.field) == (6, "dimensions")
    assert "empty" in str(error)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("# just markdown\n", ["no YAML front matter"]),
        ("---\nid: x\n", ["never closed"]),
        ("---\n- a\n- b\n---\n", ["must be a mapping"]),
        ("", ["no YAML front matter"]),
    ],
)
def test_missing_front_matter(tmp_path, text, words):
    error = _error(tmp_path, text)
    assert error.line in (1, 2)
    for word in words:
        assert word in str(error)


# --- the judgment model and the judge's prompt ------------------------------------------------


def test_judgment_model_checks_the_total():
    rubric = find_rubric("text-writing")
    model = judgment_model(rubric)
    assert judgment_model(rubric) is model
    schema = model.model_json_schema()
    assert list(schema["properties"]) == [
        "Language Accuracy",
        "Content Quality",
        "Creativity and Thinking",
        "Structure and Format",
        "total",
        "reason",
    ]
    assert schema["properties"]["Content Quality"]["maximum"] == 30
    scores = {"Language Accuracy": 15, "Content Quality": 20, "Creativity and Thinking": 22}
    good = {**scores, "Structure and Format": 18, "total": 75, "reason": "Solid."}
    judgment = model.model_validate_json(json.dumps(good))
    assert judgment.content_quality == 20  # type: ignore[attr-defined]
    assert judgment.dimension_scores()["Structure and Format"] == 18
    by_field = model(
        language_accuracy=15,
        content_quality=20,
        creativity_and_thinking=22,
        structure_and_format=18,
        total=75,
        reason="ok",
    )
    assert by_field.total == 75
    with pytest.raises(ValidationError, match="dimension scores sum to 75"):
        model.model_validate({**good, "total": 80})
    with pytest.raises(ValidationError, match="less than or equal to 20"):
        model.model_validate({**good, "Language Accuracy": 25, "total": 85})
    with pytest.raises(ValidationError):
        model.model_validate({k: v for k, v in good.items() if k != "reason"})


def test_judgment_model_for_names_that_are_not_identifiers(tmp_path):
    path = tmp_path / "zh.md"
    path.write_text(
        "---\nid: zh\nversion: 1\ntask: t\nscale: [0, 10]\ndimensions:\n"
        "  - {name: 语言准确, points: 6}\n  - {name: 2nd part, points: 3}\n"
        "  - {name: Scale, points: 1}\n---\n正文\n",
        encoding="utf-8",
    )
    model = judgment_model(load_rubric(path))
    assert list(model.dimension_names) == ["dim_1", "dim_2", "dim_3"]
    judgment = model.model_validate(
        {"语言准确": 5, "2nd part": 2, "Scale": 1, "total": 8, "reason": "r"}
    )
    assert judgment.dimension_scores() == {"语言准确": 5, "2nd part": 2, "Scale": 1}
    with pytest.raises(ValidationError, match="sum to 8"):
        model.model_validate({"语言准确": 5, "2nd part": 2, "Scale": 1, "total": 9, "reason": "r"})


def test_judge_messages_hold_rubric_task_and_answer():
    rubric = find_rubric("question-generation")
    messages = judge_messages(rubric, "Write three questions on photosynthesis.", "Q1. Why ...")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert rubric.body in user
    assert "Write three questions on photosynthesis." in user
    assert "Q1. Why ..." in user
    for dim in rubric.dimensions:
        assert f'"{dim.name}": <score from 0 to {dim.points:g}>' in user
    assert '"total"' in user and '"reason"' in user
    assert "from 0 to 100" in user
    assert load_prompt(JUDGE_PROMPT).path.name == "judge.md"


# --- command line -----------------------------------------------------------------------------


def gramagents(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gramagents", *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_rubric_check_prints_the_dimensions(tmp_path):
    result = gramagents("rubric", "check", "question-generation", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "question-generation version 1 (question_generation), scale 0-100" in lines[0]
    assert "  20  Accuracy and Clarity" in lines
    assert "  10  Originality and Utility" in lines
    assert lines[-1] == "ok"


def test_rubric_check_reports_one_line_and_exit_2(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text(GOOD.replace("points: 40", "points: 30"), encoding="utf-8")
    result = gramagents("rubric", "check", str(path), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        f"error: {path}:6: field 'dimensions': the dimensions' points sum to 90 "
        "but the scale max is 100"
    ]
    assert result.stdout == ""
    missing = gramagents("rubric", "check", "nope", cwd=tmp_path)
    assert missing.returncode == 2
    assert len(missing.stderr.strip().splitlines()) == 1
    assert "Traceback" not in missing.stderr
