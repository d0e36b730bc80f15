"""EduEval's report in the paper's layout (Tables 2-5), from scripted models with known answers.

Each item's prompt carries its own key (`键B`, `参考：…`, `类3`, `分80`) so that the scripted
"sharp" model answers every item right and the "blunt" ones answer in a fixed way; every cell
of the tables is then known by hand.
"""

import asyncio
import json
import math
import re

from sklearn.metrics import cohen_kappa_score

from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.workflow.eval import EvalOptions, run_eval


def _mc(item_id, task, task_id, level, key, n=4, shots=0):
    options = {k: f"选项{k}" for k in "ABCDEFGH"[:n]}
    vars_ = {"subject": "语文", "question": f"{item_id} 键{key}", "options": options}
    return Item(
        id=item_id,
        task=task + ("-3SHOT" if shots else ""),
        prompt=PromptParts(
            template="edu/mc-multi.md" if "MULTI" in task else "edu/mc.md",
            vars={**vars_, "shots": []},
        ),
        answer=key,
        meta={"task_id": task_id, "level": level, "subject": "语文", "options": options},
    )


def _item(item_id, task, task_id, level, template, vars_, answer):
    return Item(
        id=item_id,
        task=task,
        prompt=PromptParts(template=template, vars={**vars_, "shots": []}),
        answer=answer,
        meta={"task_id": task_id, "level": level, "subject": "语文"},
    )


OPEN = [  # (id, task, task_id, level, template, vars, gold)
    ("p0", "EDU-TEXT", "2-4", "understanding", "edu/open.md",
     {"prompt": "赏析诗句。参考：春风又绿江南岸", "task_input": ""}, "春风又绿江南岸"),
    ("d0", "EDU-DIALOGUE", "3-1", "application", "edu/dialogue.md", {"dialogue": "好，类3"}, 3),
    ("d1", "EDU-DIALOGUE", "3-1", "application", "edu/dialogue.md", {"dialogue": "对，类9"}, 9),
    ("s0", "EDU-ESSAY", "3-5", "application", "edu/essay.md",
     {"question": "春", "essay": "分80"}, 80),
    ("s1", "EDU-ESSAY", "3-5", "application", "edu/essay.md",
     {"question": "秋", "essay": "分60"}, 60),
    ("q0", "EDU-QG", "5-1", "creativity", "edu/open.md",
     {"prompt": "年级：3；学科：数学；知识点：乘法\n出一道题", "task_input": ""}, None),
]  # fmt: skip
CHOICES = [  # (id prefix, task, task_id, level, golds)
    ("m", "EDU-MC", "1-1", "memory", ["A", "B", "C", "D"]),
    ("u", "EDU-MC", "2-1", "understanding", ["B", "A"]),
    ("v", "EDU-MC-MULTI", "2-1", "understanding", ["AC", "BD"]),
    ("e", "EDU-MC", "Ethics/Teacher_Dilemmas", "ethics", ["A", "B"]),
]


def dataset():
    items = [
        _mc(f"{prefix}{k}", task, task_id, level, key)
        for prefix, task, task_id, level, keys in CHOICES
        for k, key in enumerate(keys)
    ]
    items += [_item(*row) for row in OPEN]
    items += [_mc(f"t{k}", "EDU-MC", "1-1", "memory", key, shots=3) for k, key in enumerate("ABCD")]
    return items


def sharp(request):
    """Every item right: the key its prompt carries; essay scores 3 above the teachers'."""
    text = request.messages[-1].content
    if "知识点" in text:
        return "优秀的题目：小明有3盒铅笔，每盒12支，一共多少支？"
    if found := re.search(r"参考：(\S+)", text):
        return found.group(1)
    if found := re.search(r"类(\d)", text):
        return found.group(1)
    if found := re.search(r"分(\d+)", text):
        return str(int(found.group(1)) + 3)
    return "答案是" + re.findall(r"键([A-H]+)", text)[-1]


def blunt(request):
    """A fixed answer per task: A, 不知道, 1, 50, an ordinary question."""
    text = request.messages[-1].content
    if "知识点" in text:
        return "一道普通的题目。"
    if "参考：" in text:
        return "不知道"
    if "类" in text:
        return "1"
    if "分" in text and "作文" in text:
        return "50"
    return "答案是A"


def marks(request):
    """Full marks for an answer calling itself 优秀, half of every dimension otherwise."""
    schema = request.response_schema
    full = "优秀" in request.messages[-1].content
    dims = {
        prop.get("title") or name: prop["maximum"] if full else prop["maximum"] // 2
        for name, prop in schema["properties"].items()
        if name not in ("total", "reason")
    }
    return json.dumps({**dims, "total": sum(dims.values()), "reason": "-"}, ensure_ascii=False)


ScriptedBackend.register("edu-sharp", sharp)
ScriptedBackend.register("edu-blunt", blunt)
ScriptedBackend.register("edu-blunt-too", blunt)
ScriptedBackend.register("edu-marks", marks)

MODELS = ["scripted:edu-blunt", "scripted:edu-sharp", "scripted:edu-blunt-too"]
ZERO_SHOT_HEADER = (  # cells are text: the ROUGE-L mark is escaped, as markdown shows a star
    "| Model | Memory 1-1 | Understanding 2-1 | Understanding 2-4\\* | Application 3-1 | "
    "Application 3-5† | Creativity 5-1‡ | Ethics Teacher_Dilemmas | Average | Rank |"
)
SHARP_ZERO = "100.0 | 100.0 | 100.0 | 100.0 | 3.000 | 100.0 | 100.0 | 100.0 | 1"
BLUNT_ZERO = "25.0 | 25.0 | 0.0 | 0.0 | 22.361 | 50.0 | 50.0 | 25.0 | 2"


def _table(report: str, title: str) -> list[str]:
    lines = report.splitlines()
    start = next(
        k for k, line in enumerate(lines) if line.startswith("#") and line.lstrip("# ") == title
    )
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows


def test_the_paper_layout_has_every_cell_from_known_answers(in_tmp):
    path = in_tmp / "dataset.jsonl"
    write_jsonl_atomic(path, dataset())
    options = EvalOptions(models=MODELS, judge="scripted:edu-marks", run_dir=in_tmp / "run")
    result = asyncio.run(run_eval(path, options))
    assert result.manifest.status == "complete"
    report = result.report_path.read_text(encoding="utf-8")

    zero = _table(report, "EduEval, the paper's Tables 2-3 layout: zero-shot")
    assert zero[0] == ZERO_SHOT_HEADER
    # Sharp: all right, essays 3 points off (RMSE 3); blunt: always A (1-1: 1 of 4; 2-1: one of
    # two single-answer items, neither multi-answer set; Teacher_Dilemmas: 1 of 2), no common
    # character with the poem's reference, label 1 for labels 3 and 9, essays 50 for 80 and
    # 60 (RMSE sqrt((30² + 10²) / 2) = 22.361), half marks from the judge. The Average leaves
    # the RMSE out: (25 + 25 + 0 + 0 + 50 + 50) / 6 = 25. Equal Averages share a rank.
    assert zero[2:] == [
        f"| scripted:edu-sharp | {SHARP_ZERO} |",
        f"| scripted:edu-blunt | {BLUNT_ZERO} |",
        f"| scripted:edu-blunt-too | {BLUNT_ZERO} |",
    ]
    assert math.isclose(math.sqrt((30**2 + 10**2) / 2), 22.361, abs_tol=5e-4)

    three = _table(report, "EduEval, the paper's Tables 4-5 layout: three-shot")
    assert three == [
        "| Model | Memory 1-1 | Average | Rank |",
        "|---|---|---|---|",
        "| scripted:edu-sharp | 100.0 | 100.0 | 1 |",
        "| scripted:edu-blunt | 25.0 | 25.0 | 2 |",
        "| scripted:edu-blunt-too | 25.0 | 25.0 | 2 |",
    ]

    qwk_sharp = cohen_kappa_score([83, 63], [80, 60], weights="quadratic")
    qwk_blunt = cohen_kappa_score([50, 50], [80, 60], weights="quadratic")
    essays = _table(report, "Essay scoring (3-5)")
    assert essays[2:] == [
        "| scripted:edu-blunt | zero-shot | 2 | 22.361 | "
        f"{qwk_blunt:.3f} | 0.000 | 0.000 |",  # constant scores: no correlation
        f"| scripted:edu-sharp | zero-shot | 2 | 3.000 | {qwk_sharp:.3f} | 1.000 | 0.000 |",
        f"| scripted:edu-blunt-too | zero-shot | 2 | 22.361 | {qwk_blunt:.3f} | 0.000 | 0.000 |",
    ]

    page = (result.folder.path / "report.html").read_text(encoding="utf-8")
    assert 'data-section="edu"' in page and "Tables 2-3 layout: zero-shot" in page
    assert "22.361" in page and "Teacher_Dilemmas" in page
