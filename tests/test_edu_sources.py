import json
from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.recipes.edu.options import split_options
from gramagents.recipes.edu.qc import anomaly_flags, difficulty_flags
from gramagents.recipes.edu.sources import EduItem, grade_of, read_edueval
from gramagents.recipes.edu.taxonomy import level, router_guide
from gramagents.workflow.filters import near_duplicates
from gramagents.workflow.nodes import texts

MINI = Path(__file__).resolve().parent.parent / "examples" / "edu"


def test_the_mini_layout_gives_every_shape_with_levels_and_grades():
    result = read_edueval(MINI)
    shapes = {i.shape for i in result.items}
    assert shapes == {
        "mc", "dialogue", "essay", "poetry", "reading",
        "question_generation", "teaching_design", "text_writing",
    }  # fmt: skip
    assert {i.level for i in result.items} == {
        "memory",
        "understanding",
        "application",
        "reasoning",
        "creativity",
        "ethics",
    }
    history = [i for i in result.items if "初中历史" in i.task]
    assert {i.grade for i in history} == {"junior"}
    listed = next(i for i in result.items if i.raw.get("ques_answer") == ["B"])
    assert listed.answer == "B" and listed.difficulty == 2 and listed.difficulty_label == "较易"
    three = next(i for i in result.items if i.options and len(i.options) == 3)
    assert three.answer == "C"
    [unparsed] = result.unparsed
    assert unparsed.line == 3 and "options" in unparsed.reason
    # one warning per file and field, with the count and the lines
    assert any(
        w.endswith("高中诗歌鉴赏.jsonl: field 'subject' is missing on 3 of 3 lines (lines 1, 2, 3)")
        for w in result.warnings
    )


@pytest.mark.parametrize(
    ("text", "stem", "options"),
    [
        (
            "题目（ ）。A. 甲 B. 乙 C. 丙 D. 丁",
            "题目（ ）。",
            {"A": "甲", "B": "乙", "C": "丙", "D": "丁"},
        ),
        ("题目 A．一 B．二", "题目", {"A": "一", "B": "二"}),
        ("题目 (A) x (B) y (C) z", "题目", {"A": "x", "B": "y", "C": "z"}),
        ("题目\nA、春\nB、夏", "题目", {"A": "春", "B": "夏"}),
        ("没有选项的题目", "没有选项的题目", {}),
    ],
)
def test_options_are_split_out_of_the_question(text, stem, options):
    assert split_options(text) == (stem, options)


def test_grades_come_from_file_names():
    assert grade_of("小学数学公式") == "primary"
    assert grade_of("senior_physics") == "senior"
    assert grade_of("grade7_math") == "grade 7"
    assert grade_of("七年级语文") == "grade 七"
    assert grade_of("课堂对话分类") is None


def test_a_broken_line_is_one_error_with_file_and_line(tmp_path):
    (tmp_path / "1_memory").mkdir()
    (tmp_path / "1_memory" / "t.jsonl").write_text('{"ques_content": "x"}\n{oops\n', "utf-8")
    with pytest.raises(InputError, match=r"t\.jsonl:2: invalid JSON"):
        read_edueval(tmp_path)


def test_taxonomy_levels_and_router_guide():
    assert level("1_memory").id == "memory" and level("伦理").id == "ethics"
    assert level("Creativity").dok == (4,)
    guide = router_guide()
    assert "dominant cognitive operation" in guide and "creativity" in guide


def _item(n, prompt, answer="A", task="t", options=None):
    return EduItem(
        id=f"i{n}", task=task, level="memory", subject="s", grade="g", prompt=prompt,
        options=options or {"A": "1", "B": "2", "C": "3", "D": "4"}, answer=answer,
        explanation=None, difficulty=None, metric="accuracy", shape="mc", source=f"f:{n}",
    )  # fmt: skip


def test_minhash_finds_the_planted_near_duplicate_and_only_it():
    result = read_edueval(MINI)
    keys = texts(result.items, ["prompt", "options"])
    repeats = near_duplicates(keys, [i.shape for i in result.items])
    assert list(repeats) == [6]
    first, jaccard = repeats[6]
    assert first == 5 and jaccard >= 0.85
    assert near_duplicates(keys, [str(k) for k in range(len(keys))]) == {}  # other groups


def test_difficulty_and_length_flags():
    assert difficulty_flags({"a": 1.0, "b": 0.0, "c": 0.5}) == {"a": "too_easy", "b": "too_hard"}
    balanced = [_item(n, f"题目{n}的内容是关于第{n}个知识点", "ABCD"[n % 4]) for n in range(12)]
    assert anomaly_flags(balanced)[0] == {}
    outlier = balanced + [_item(99, "很长" * 400, "B")]
    flags, counts = anomaly_flags(outlier)
    assert list(flags) == ["i99"] and flags["i99"][0].startswith("length: 800 characters >")
    assert counts["length"] == 1
    assert json.dumps(balanced[0].record(), ensure_ascii=False)


def test_calibration_asks_with_the_model_spec_s_own_decoding():
    import asyncio

    from gramagents.models import Model, create_backend
    from gramagents.models.scripted import ScriptedBackend
    from gramagents.recipes.edu.filters import CalibrateOptions, calibrate
    from gramagents.workflow.nodes import BuildView, NodeEnv

    asked = []
    ScriptedBackend.register("note-params", lambda r: asked.append(r.params) or "A")
    spec = "scripted:note-params?temperature=0.2"
    items = [_item(n, f"题目{n}") for n in range(2)]
    view = BuildView(records={i.id: i for i in items})
    env = NodeEnv(True, 1, lambda texts, model: None, {spec: Model(create_backend(spec))})
    options = CalibrateOptions(models=[spec], samples=2, temperature=0.7)
    asyncio.run(calibrate(view, options, env))
    assert len(asked) == 4 and {p.temperature for p in asked} == {0.2}
    assert sorted(p.seed for p in asked) == [0, 0, 1, 1]  # the samples' seeds stay theirs
