"""Repeated ids, handled alike by every reader: an identical repeat is dropped and listed (count
and ids in the manifest and the report), a conflicting one is an error naming file, line and
field. (EduEval's layout: `test_edu_ingest.py`.)"""

import asyncio
import json

import pytest

from gramagents.errors import InputError
from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.cpg.table import read_grammar_table
from gramagents.recipes.gec.items import read_grammar_items
from gramagents.records import Item, PromptParts
from gramagents.sources.answers import apply_answer_file
from gramagents.sources.datasets import Dataset, read_dataset
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import EXAMPLE_CSV

LITE = (
    "id,question,QuestionBank\n"
    "1,判断：“我会游泳。”是否使用了语法点[能愿动词：会]？,SINGLE-T\n"
    "2,判断：“他能来。”是否使用了语法点[能愿动词：能]？,SINGLE-T\n"
    "1,判断：“我会游泳。”是否使用了语法点[能愿动词：会]？,SINGLE-T\n"
    "3,判断：“你可以走了。”是否使用了语法点[能愿动词：可以]？,SINGLE-T\n"
    "2,判断：“他能来。”是否使用了语法点[能愿动词：能]？,SINGLE-T\n"
)


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_the_lite_file_asks_a_repeated_row_once_and_lists_it(tmp_path):
    dataset = read_dataset(_write(tmp_path / "lite.csv", LITE), "cpg-eval")
    assert [i.id for i in dataset.items] == ["SINGLE-T/1", "SINGLE-T/2", "SINGLE-T/3"]
    assert [(d["id"], d["line"], d["first"]) for d in dataset.duplicates] == [
        ("SINGLE-T/1", 4, f"{tmp_path / 'lite.csv'}:2"),
        ("SINGLE-T/2", 6, f"{tmp_path / 'lite.csv'}:3"),
    ]


def test_an_eval_says_how_many_rows_repeated_and_which(tmp_path):
    ScriptedBackend.register("always-true", lambda request: "T")
    path = _write(tmp_path / "lite.csv", LITE)
    options = EvalOptions(models=["scripted:always-true"], fmt="cpg-eval", run_dir=tmp_path / "e")
    result = asyncio.run(run_eval(path, options))
    assert result.manifest.dataset["duplicates"] == {
        "count": 2,
        "ids": ["SINGLE-T/1", "SINGLE-T/2"],
        "rows": [f"{path}:4 repeats {path}:2", f"{path}:6 repeats {path}:3"],
    }
    assert result.manifest.counts.items == 3
    report = (tmp_path / "e" / "report.md").read_text(encoding="utf-8")
    assert "- duplicates: 2 repeated rows dropped (same id, same content; ids: `SINGLE-T/1`, " in (
        report
    )


def test_a_released_id_with_two_questions_is_an_error(tmp_path):
    text = LITE.replace("3,判断：“你可以走了。”", "1,判断：“你可以走了。”")
    with pytest.raises(InputError) as caught:
        read_dataset(_write(tmp_path / "lite.csv", text), "cpg-eval")
    assert (caught.value.line, caught.value.field) == (5, "question")
    assert "duplicate id 'SINGLE-T/1' (first on line 2) with different content" in str(caught.value)


GOOD = {"id": "a", "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {"text": "x"}}}


def test_our_own_dataset_drops_an_identical_repeat(tmp_path):
    other = {**GOOD, "id": "b"}
    lines = [json.dumps(x) for x in (GOOD, other, GOOD)]
    dataset = read_dataset(_write(tmp_path / "dataset.jsonl", "\n".join(lines) + "\n"))
    assert [i.id for i in dataset.items] == ["a", "b"]
    assert [(d["id"], d["line"]) for d in dataset.duplicates] == [("a", 3)]


def _pair(pair_id, good="The cat sleeps.", bad="The cat sleep."):
    return json.dumps(
        {"sentence_good": good, "sentence_bad": bad, "UID": "agreement", "pairID": pair_id}
    )


def test_blimp_scores_a_repeated_pair_once_and_refuses_a_clash(tmp_path):
    path = _write(tmp_path / "agreement.jsonl", "\n".join([_pair(0), _pair(1), _pair(0)]) + "\n")
    dataset = read_dataset(path, "blimp")
    assert len(dataset.items) == 2 and [d["id"] for d in dataset.duplicates] == [
        "BLIMP/agreement/0"
    ]
    _write(path, "\n".join([_pair(0), _pair(0, bad="The cats sleeps.")]) + "\n")
    with pytest.raises(InputError) as caught:
        read_dataset(path, "blimp")
    assert (caught.value.line, caught.value.field) == (2, "pairID")


def _items():
    return [
        Item(id=f"SIM-GRA/{n}", task="SIM-GRA", prompt=PromptParts(template="raw.md"),
             meta={"options": [{"key": k, "text": k} for k in "ABCD"]})
        for n in (1, 2)
    ]  # fmt: skip


def test_an_answer_given_twice_is_read_once_and_two_answers_are_an_error(tmp_path):
    dataset = Dataset(path=tmp_path, items=_items(), digest="")
    path = _write(tmp_path / "answers.csv", "id,answer\nSIM-GRA/1,B\nSIM-GRA/2,C\nSIM-GRA/1,B\n")
    apply_answer_file(dataset, path)
    assert [i.answer for i in dataset.items] == ["B", "C"]
    assert [(d["id"], d["line"]) for d in dataset.duplicates] == [("SIM-GRA/1", 4)]
    _write(path, "id,answer\nSIM-GRA/1,B\nSIM-GRA/1,D\n")
    with pytest.raises(InputError) as caught:
        apply_answer_file(Dataset(path=tmp_path, items=_items(), digest=""), path)
    assert (caught.value.line, caught.value.field) == (3, "answer")
    assert "duplicate answer id 'SIM-GRA/1' (first on line 2)" in str(caught.value)


POINT = {"id": "1", "category": "能愿动词", "level": 1, "name": "会", "examples": ["我会游泳。"]}


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("t.jsonl", "\n".join([json.dumps(POINT, ensure_ascii=False)] * 2) + "\n", 2),
        ("t.csv", "id,category,level,name,sentence\n" + "1,能愿动词,1,会,我会游泳。\n" * 2, 3),
    ],
)
def test_grammar_tables_drop_a_repeated_point_or_row(tmp_path, name, text, line):
    dropped: list[dict] = []
    [point] = read_grammar_table(_write(tmp_path / name, text), dropped)
    assert point.examples == ["我会游泳。"] and [d["line"] for d in dropped] == [line]


ITEM = {"id": "G01", "level": "A1", "name": "be: I am", "pairs": [
    {"ungrammatical": "I is a student.", "correction": "I am a student."}]}  # fmt: skip


def test_grammar_item_lists_drop_a_repeated_item_or_row_and_refuse_a_clash(tmp_path):
    dropped: list[dict] = []
    path = _write(tmp_path / "items.jsonl", "\n".join([json.dumps(ITEM)] * 2) + "\n")
    [item] = read_grammar_items(path, dropped)
    assert len(item.pairs) == 1 and [d["id"] for d in dropped] == ["G01"]
    row = "G01,A1,be: I am,,I is a student.,I am a student.,\n"
    header = "id,level,name,notes,ungrammatical,correction,alternatives\n"
    dropped = []
    [item] = read_grammar_items(_write(tmp_path / "items.csv", header + row + row), dropped)
    assert len(item.pairs) == 1 and [d["line"] for d in dropped] == [3]
    clash = row.replace("I am a student.", "I'm a student.")
    with pytest.raises(InputError) as caught:
        read_grammar_items(_write(tmp_path / "items.csv", header + row + clash))
    assert (caught.value.line, caught.value.field) == (3, "ungrammatical")


@pytest.mark.slow
def test_a_build_lists_the_repeats_it_dropped_in_its_manifest_and_report(tmp_path):
    lines = EXAMPLE_CSV.read_text(encoding="utf-8").splitlines()
    table = _write(tmp_path / "table.csv", "\n".join([*lines, lines[1]]) + "\n")
    options = BuildOptions(source=table, agents=False, run_dir=tmp_path / "b", use_cache=False)
    result = asyncio.run(run_build("cpg", options))
    repeated = result.manifest.source["duplicates"]
    assert repeated["count"] == 1 and repeated["rows"] == [
        f"{table}:{len(lines) + 1} repeats {table}:2"
    ]
    report = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    assert "## Duplicates" in report and f"`{repeated['ids'][0]}`" in report
