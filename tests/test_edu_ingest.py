"""EduEval ingestion keeps every well-formed item, in the ways real exam files write them.

`tests/data/edueval/` is a layout in the release's shape (English level folders, task files
named like the release's, one with a space), written for the project: 83 items of K-12 Chinese
and English exams whose options come on one line, one per line, after `选项：`, as a list
literal (the release's Ethics files), as numbered-statement combinations, as table rows, in
two columns, as true-or-false words, in a field of their own, and answers as a letter, a list,
several letters or an option's text; 7 are broken on purpose.
`tests/data/edueval_expected.json` says, per `file:line`, the stem, options, gold and shape the
rules must find, or the reason a broken line is refused.
"""

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from gramagents.agents.base import AgentContext
from gramagents.errors import InputError
from gramagents.models import Model, create_backend
from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.edu.agents import UnparsedTask, standardize
from gramagents.recipes.edu.options import OptionError, answer_letters, split_options
from gramagents.recipes.edu.sources import read_edueval
from gramagents.records import GenParams
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "edueval"
EXPECTED = json.loads((DATA / "edueval_expected.json").read_text(encoding="utf-8"))
BROKEN = {k: v["refused"] for k, v in EXPECTED.items() if "refused" in v}
WELL_FORMED = {k: v for k, v in EXPECTED.items() if "refused" not in v}


def _key(source: str) -> str:
    path, line = source.rsplit(":", 1)
    return f"{Path(path).relative_to(CORPUS)}:{line}"


def _per_file() -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for key in EXPECTED:
        entry = counts.setdefault(key.rsplit(":", 1)[0], Counter())
        entry["read"] += 1
        entry["refused" if key in BROKEN else "parsed"] += 1
    return {f: {k: c[k] for k in ("read", "parsed", "refused")} for f, c in counts.items()}


def test_the_corpus_is_what_the_issue_asks_for():
    assert len(EXPECTED) >= 60 and len(BROKEN) == 7
    assert {k.split("/")[0] for k in EXPECTED} >= {"Memory", "Understanding", "Ethics"}
    shapes = Counter(v["shape"] for v in WELL_FORMED.values())
    assert shapes["mc"] >= 50 and shapes["mc_multi"] >= 6


def test_every_well_formed_item_is_read_with_its_stem_options_and_gold():
    result = read_edueval(CORPUS)
    found = {
        _key(i.source): {
            "shape": i.shape,
            "stem": i.prompt,
            "options": i.options,
            "answer": i.answer,
        }
        for i in result.items
    }
    for key, expected in WELL_FORMED.items():
        assert found.get(key) == expected, key
    assert len(found) == len(WELL_FORMED)
    refused = {_key(f"{u.path}:{u.line}"): u.reason for u in result.unparsed}
    assert set(refused) == set(BROKEN)
    for key, reason in BROKEN.items():
        assert reason in refused[key], key
    levels = {_key(i.source).split("/")[0]: i.level for i in result.items}
    assert levels["Ethics"] == "ethics" and levels["Memory"] == "memory"
    counts = {
        str(Path(f["file"]).relative_to(CORPUS)): {k: f[k] for k in ("read", "parsed", "refused")}
        for f in result.files
    }
    assert counts == _per_file()


@pytest.mark.parametrize(
    ("text", "stem", "options"),
    [
        ("在△ABC中，∠A：∠B=1：2（ ）A. 1 B. 2", "在△ABC中，∠A：∠B=1：2（ ）", {"A": "1", "B": "2"}),
        ("Who? A. New York B. Washington D.C. C. Boston", "Who?",
         {"A": "New York", "B": "Washington D.C.", "C": "Boston"}),
        ("In 1066 A.D. the Normans came. A. 1 B. 2", "In 1066 A.D. the Normans came.",
         {"A": "1", "B": "2"}),
        ("周长（ ）A．πr²B．2πrC．2r", "周长（ ）", {"A": "πr²", "B": "2πr", "C": "2r"}),
        ("题 A、甲；B、乙；", "题", {"A": "甲", "B": "乙"}),
        ("a = ['x', 'y']，输出（ ）\nA. x B. ['x', 'y']", "a = ['x', 'y']，输出（ ）",
         {"A": "x", "B": "['x', 'y']"}),
        ("Is it a ___?\nA.milkB.breadC.tea", "Is it a ___?",
         {"A": "milk", "B": "bread", "C": "tea"}),
        ("快的是\nA.$$v({A)}=1$$\nB.$$v({B)}=2$$", "快的是",
         {"A": "$$v({A)}=1$$", "B": "$$v({B)}=2$$"}),
        ("谁？ A．甲 C．丙\n(B) 乙 (D) 丁", "谁？", {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}),
        ("哪队？ A 山南 B 江南", "哪队？", {"A": "山南", "B": "江南"}),
        ("判断对错(A/B)：0是自然数。", "判断对错(A/B)：0是自然数。", {"A": "对", "B": "错"}),
        ("表\nA\n甲\nB\n乙\n选项: A. A B. B", "表", {"A": "甲", "B": "乙"}),
        ("组\nA. 甲\nB. 乙\n选项: A. B B. A", "组", {"A": "乙", "B": "甲"}),
        ("表格丢了\n选项: A. A B. B", "表格丢了", {}),  # the groups it names are lost
        ("没有选项（  ）。", "没有选项（  ）。", {}),
    ],
)  # fmt: skip
def test_option_rules(text, stem, options):
    assert split_options(text) == (stem, options)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("图中是（ ）A. B. C. D.", "option A has no text"),
        ("题\n['A.甲', 'A.乙']", "option 2 is lettered A, expected B"),
        ("分成(A)、(B)两组", "option A has no text"),
    ],
)
def test_options_that_cannot_be_recovered_say_why(text, words):
    with pytest.raises(OptionError, match=words):
        split_options(text)


OPTIONS = {"A": "the", "B": "a", "C": "公元前221年", "D": "an"}


@pytest.mark.parametrize(
    ("raw", "letters"),
    [
        ("C", ["C"]), (" c ", ["C"]), ("（D）", ["D"]), ("答案：B", ["B"]), (["A"], ["A"]),
        ("BD", ["B", "D"]), ("D,B", ["B", "D"]), ("B、D", ["B", "D"]), (["D", "A"], ["A", "D"]),
        ("a", ["B"]), ("an", ["D"]), ("公元前221年", ["C"]), ("C. 公元前221年", ["C"]),
        (["the", "an"], ["A", "D"]),
    ],
)  # fmt: skip
def test_answers_as_letters_lists_or_option_texts(raw, letters):
    assert answer_letters(raw, OPTIONS) == letters


@pytest.mark.parametrize(
    ("raw", "words"),
    [("E", "not one of the options"), ("", "no answer"), ("公元前", "neither option letters")],
)
def test_answers_that_name_no_option_say_why(raw, words):
    with pytest.raises(OptionError, match=words):
        answer_letters(raw, OPTIONS)


def _line(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("folder", ["Ethics", "6_ethics", "6.伦理", "德育"])
def test_an_ethics_folder_is_read_whatever_its_name(tmp_path, folder):
    (tmp_path / folder).mkdir()
    item = {"subject": "小学伦理", "ques_content": "题\n['A.甲', 'B.乙']", "ques_answer": "A"}
    (tmp_path / folder / "Primary_Moral.jsonl").write_text(_line(item), "utf-8")
    for root in (tmp_path, tmp_path / folder):  # the layout, or the level's folder alone
        [read] = read_edueval(root).items
        assert (read.level, read.grade, read.options) == (
            "ethics",
            "primary",
            {"A": "甲", "B": "乙"},
        )


def test_repeated_ids_are_dropped_when_identical_and_refused_when_not(tmp_path):
    folder = tmp_path / "Creativity"
    folder.mkdir()
    first = {"id": 1, "grade": "五年级", "subject": "语文", "knowledge_point": "比喻",
             "task_description": "设计一道题。"}  # fmt: skip
    other = {**first, "id": 2}
    (folder / "Question_Generation.jsonl").write_text(_line(first) + _line(other) + _line(first))
    (folder / "Teaching_Design.jsonl").write_text(
        _line({"id": 1, "grade": "三年级", "subject": "语文", "topic": "荷花",
               "teaching_design_requirements": "设计一课时。"})
    )  # fmt: skip
    result = read_edueval(tmp_path)
    assert [i.id for i in result.items] == [
        "Creativity/Question_Generation/1",
        "Creativity/Question_Generation/2",
        "Creativity/Teaching_Design/1",  # ids are the task's: files may both count from 1
    ]
    [dropped] = result.duplicates
    assert dropped["id"] == "1" and dropped["line"] == 3 and dropped["first"].endswith(":1")
    assert result.files[0] | {"reasons": {}} == {
        "file": str(folder / "Question_Generation.jsonl"), "level": "creativity", "read": 3,
        "parsed": 2, "refused": 0, "duplicates": 1, "reasons": {},
    }  # fmt: skip
    (folder / "Question_Generation.jsonl").write_text(
        _line(first) + _line({**first, "grade": "六"})
    )
    with pytest.raises(InputError) as caught:
        read_edueval(tmp_path)
    assert (caught.value.line, caught.value.field) == (2, "id")
    assert "duplicate id '1' (first on line 1) with different content ('grade' differs)" in str(
        caught.value
    )


def test_the_standardizer_may_give_several_letters(tmp_path):
    line = {
        "subject": "历史",
        "ques_content": "下列哪些是唐朝的诗人？李白、杜甫、苏轼",
        "ques_answer": "AB",
    }
    poets = {"A": "李白", "B": "杜甫", "C": "苏轼"}
    answer = {"question": "下列哪些是唐朝的诗人？", "options": poets, "answer": "A、B"}
    ScriptedBackend.register("two-letters", lambda request: json.dumps(answer, ensure_ascii=False))
    [unparsed] = read_edueval(_layout(tmp_path, line)).unparsed
    assert unparsed.reason == "options could not be split out of ques_content"
    context = AgentContext(
        model=Model(create_backend("scripted:two-letters")),
        prompt="edu/standardize.md",
        params=GenParams(),
        max_reasks=0,
    )
    result = asyncio.run(standardize(UnparsedTask(unparsed), context))
    [item] = result.records
    assert (result.outcome, item.shape, item.answer) == ("fixed", "mc_multi", "AB")
    assert item.options == poets


def test_an_options_field_is_read_whatever_the_content_looks_like(tmp_path):
    line = {"ques_content": "下列说法正确的是\nA.\nB. 对", "options": ["甲", "乙", "丙"],
            "ques_answer": "B"}  # fmt: skip
    result = read_edueval(_layout(tmp_path, line))
    assert not result.unparsed
    [item] = result.items
    assert item.options == {"A": "甲", "B": "乙", "C": "丙"} and item.answer == "B"
    assert item.prompt.startswith("下列说法正确的是")


def test_an_item_the_standardizer_makes_reads_its_difficulty_as_the_rules_do(tmp_path):
    line = {
        "ques_content": "哪位是唐朝的诗人？李白、苏轼",
        "ques_answer": "A",
        "ques_difficulty": 3,
    }
    answer = {
        "question": "哪位是唐朝的诗人？",
        "options": {"A": "李白", "B": "苏轼"},
        "answer": "A",
    }
    ScriptedBackend.register("level-3", lambda request: json.dumps(answer, ensure_ascii=False))
    [unparsed] = read_edueval(_layout(tmp_path, line)).unparsed
    context = AgentContext(
        model=Model(create_backend("scripted:level-3")),
        prompt="edu/standardize.md",
        params=GenParams(),
        max_reasks=0,
    )
    [item] = asyncio.run(standardize(UnparsedTask(unparsed), context)).records
    assert (item.difficulty, item.difficulty_label) == (3, "3")


def _layout(root: Path, *lines: dict) -> Path:
    (root / "Memory").mkdir()
    (root / "Memory" / "Junior_Knowledge_Recall.jsonl").write_text(
        "".join(_line(x) for x in lines), encoding="utf-8"
    )
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run = tmp_path_factory.mktemp("corpus") / "build"
    options = BuildOptions(source=CORPUS, agents=False, run_dir=run, use_cache=False)
    return run, asyncio.run(run_build("edu", options))


@pytest.mark.slow
def test_agents_off_build_keeps_every_well_formed_item_and_reports_each_file(built):
    run, result = built
    stages = result.manifest.stages
    assert {k: stages["ingest"][k] for k in ("read", "parsed", "unparsed")} == {
        "read": len(EXPECTED), "parsed": len(EXPECTED) - len(BROKEN), "unparsed": len(BROKEN),
    }  # fmt: skip
    assert stages["standardize"] == {"asked": 0, "fixed": 0, "failed": len(BROKEN)}
    assert stages["dedup"]["removed"] == 0
    failures = [json.loads(x) for x in (run / "failures.jsonl").read_text().splitlines()]
    assert {_key(f["source"]): f["reason_rules"] for f in failures} == {
        k: next(f["reason_rules"] for f in failures if _key(f["source"]) == k) for k in BROKEN
    }
    items = [json.loads(x) for x in (run / "dataset.jsonl").read_text().splitlines()]
    zero_shot = {_key(i["meta"]["source"]): i for i in items if i["meta"]["shots"] == 0}
    assert set(zero_shot) == set(WELL_FORMED)
    for key, expected in WELL_FORMED.items():
        item = zero_shot[key]
        assert (item["answer"], item["meta"]["options"]) == (
            expected["answer"],
            expected["options"],
        ), key
        task = {"mc": "EDU-MC", "mc_multi": "EDU-MC-MULTI"}.get(expected["shape"], "EDU-TEXT")
        assert item["task"] == task, key
    assert result.manifest.tasks["EDU-MC-MULTI"] == 7
    files = {str(Path(f["file"]).relative_to(CORPUS)): f for f in result.manifest.source["files"]}
    assert {f: {k: v[k] for k in ("read", "parsed", "refused")} for f, v in files.items()} == (
        _per_file()
    )
    assert result.manifest.source["duplicates"] == {"count": 0, "ids": [], "rows": []}
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "| file | level | read | parsed | refused | duplicates |" in report
    assert "| Ethics/Junior_Ethics Scenario.jsonl | ethics | 6 | 5 | 1 | 0 |" in report
    assert "| **total** |  | 83 | 76 | 7 | 0 |" in report
    assert "| options: option A has no text (a picture, or a lost line?) | 2 |" in report


@pytest.mark.slow
def test_several_right_answers_are_scored_as_an_exact_set(built, tmp_path):
    run, _ = built
    lines = (run / "dataset.jsonl").read_text(encoding="utf-8").splitlines()
    items = {i["id"]: i for i in map(json.loads, lines)}
    asked = [i for i in items.values() if i["meta"]["options"]]
    gold = {i["prompt"]["vars"]["question"]: i["answer"] for i in asked}

    def reply(request):
        text = request.messages[-1].content
        question = max((q for q in gold if q in text), key=text.rfind)  # after the worked examples
        if "四大发明" in question:
            return "答案是A"  # one of its two right options only
        return "答案是" + "、".join(gold[question])

    ScriptedBackend.register("edu-gold", reply)
    options = EvalOptions(models=["scripted:edu-gold"], run_dir=tmp_path / "e", use_cache=False)
    asyncio.run(run_eval(run, options))
    scores = [json.loads(x) for x in (tmp_path / "e" / "scores.jsonl").read_text().splitlines()]
    scored = [s for s in scores if s["task"].startswith("EDU-MC")]
    assert len(scored) == len(asked)
    for score in scored:
        question = items[score["item_id"]]["prompt"]["vars"]["question"]
        expected = 0.0 if "四大发明" in question else 1.0
        assert (score["scores"]["acc"], score["invalid"]) == (expected, False), question
    multi = {s["extracted"] for s in scored if s["task"].startswith("EDU-MC-MULTI")}
    assert {"A", "AB", "AC", "BD"} == multi  # "B、D" read as BD; the one-letter reply as A
