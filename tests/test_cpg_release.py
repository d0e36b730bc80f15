"""The released CPG-EVAL folder read whole, golds derived, banks rebuilt the released way.

The release is `cpg_release_files`: small files written for the project in the public layout.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter

import pytest

from gramagents.errors import InputError
from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.cpg.release_table import write_release_table
from gramagents.recipes.cpg.table import read_grammar_table
from gramagents.records import ChatRequest
from gramagents.sources.datasets import read_dataset
from gramagents.templates import load_prompt
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from . import cpg_release_files as release

BANKS = list(release.BANK_FILES)


@pytest.fixture
def folder(tmp_path):
    path = tmp_path / "question_bank"
    return path, release.write_release(path)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """The banks built, with no agents, from the table the release implies."""
    work = tmp_path_factory.mktemp("rebuilt")
    release.write_release(work / "question_bank")
    dataset = read_dataset(work / "question_bank", "cpg-eval")
    notes = write_release_table(dataset.items, work / "table.jsonl")
    result = asyncio.run(
        run_build(
            "cpg", BuildOptions(source=work / "table.jsonl", agents=False, run_dir=work / "b")
        )
    )
    return work / "table.jsonl", notes, result.items


def rendered(item) -> str:
    messages = load_prompt(item.prompt.template).render(item.prompt.vars)
    assert len(messages) == 1
    return messages[0].content


def released_layout(item) -> str:
    """The question in the released layout, from the item's own parts."""
    variables = item.prompt.vars
    if item.task.startswith("SINGLE"):
        return release.single(variables["sentence"], variables["point"])
    if item.task in ("SIM-GRA", "CAT-GRA"):
        options = [(o["key"], o["text"]) for o in variables["options"]]
        maker = release.sim_gra if item.task == "SIM-GRA" else release.cat_gra
        return maker(variables["sentence"], options)
    maker = {"CON-INS-F10": release.con_ins_f10, "CON-INS-T5F5": release.con_ins_t5f5}.get(
        item.task, release.batch
    )
    return maker(variables["point"], variables["sentences"])


def test_every_bank_is_rendered_byte_for_byte_in_the_released_layout(rebuilt):
    _, _, items = rebuilt
    by_bank = Counter(i.task for i in items)
    assert set(by_bank) == set(BANKS)
    for item in items:
        assert rendered(item) == released_layout(item), item.id


def test_the_table_the_release_implies_rebuilds_its_questions(rebuilt):
    table, notes, items = rebuilt
    assert notes == []
    points = read_grammar_table(table)
    assert [p.id for p in points] == ["1001", "1002", "1003", "P16", "2005", "1006"]
    assert [p.group for p in points] == [
        "能愿动词",
        "能愿动词",
        "语气助词",
        "",
        "语气助词",
        "程度副词",
    ]
    assert [p.label() for p in points] == [p.label for p in release.POINTS]
    assert [p.level for p in points] == [1, 1, 1, 1, 2, 1]
    expected = release.questions()
    for bank in ("SINGLE-T", "SINGLE-F", "BATCH-T", "BATCH-F", "CAT-GRA", "CON-INS-F10"):
        built = [rendered(i) for i in items if i.task == bank]
        assert built == [question for question, _ in expected[bank]], bank
    counts = Counter(i.task for i in items)
    assert counts["SINGLE-F"] == counts["BATCH-F"] == 2 * 1 + 2 * 1  # Σ n(n−1): groups A, B
    assert counts["CAT-GRA"] == 25  # the group of one (1006) included, 陈述句 in none
    mixed = [i for i in items if i.task == "CON-INS-T5F5"]
    assert len(mixed) == 4 and all(sorted(i.answer) == sorted("TTTTTFFFFF") for i in mixed)


def test_the_folder_is_read_whole_and_the_release_determines_most_golds(folder):
    path, golds = folder
    dataset = read_dataset(path, "cpg-eval")
    files = {f["file"]: f for f in dataset.info["files"]}
    assert dataset.info["skipped"] == ["notes.csv"]
    lite = files["CPG-Eval_lite.csv"]
    assert lite["banks"] == {"BATCH-F": 4, "CAT-GRA": 25}
    assert (lite["rows"], lite["in_bank_files"], lite["repeats"]) == (31, 1, 1)
    assert Counter(i.task for i in dataset.items) == Counter(
        {bank: len(rows) for bank, rows in release.questions().items()}
    )
    repeated = [(d["id"], d["file"].endswith("lite.csv")) for d in dataset.duplicates]
    assert repeated == [("CAT-GRA/75", True)]
    assert dataset.info["golds"]["SIM-GRA"] | {"rule": ""} == {
        "rule": "",
        "derived": 25,
        "ambiguous": 5,  # both 吧 points among the options
        "missing": 0,
    }
    assert dataset.info["golds"]["CAT-GRA"]["derived"] == 15
    assert dataset.info["golds"]["CAT-GRA"]["ambiguous"] == 10  # group B: two labels 吧
    assert dataset.info["golds"]["CON-INS-T5F5"]["derived"] == 4
    for item in dataset.items:
        assert item.answer in (None, golds[item.meta["source_id"]]), item.id


def test_a_bank_file_read_alone_gets_the_golds_of_a_whole_release_answer_file(tmp_path, folder):
    path, golds = folder
    answers = tmp_path / "answers.csv"
    answers.write_text(
        "id,answer\n" + "".join(f"{i},{g}\n" for i, g in golds.items()), encoding="utf-8"
    )
    sim = path / "3-SIM-GRA.csv"
    assert all(i.answer is None for i in read_dataset(sim, "cpg-eval").items)
    ScriptedBackend.register("release-oracle", oracle(path, golds))
    result = asyncio.run(
        run_eval(
            sim,
            EvalOptions(
                models=["scripted:release-oracle"],
                fmt="cpg-eval",
                answers=answers,
                run_dir=tmp_path / "e",
            ),
        )
    )
    recorded = result.manifest.dataset["answers"]
    assert (recorded["used"], recorded["unused"], recorded["items"]) == (30, len(golds) - 30, 30)
    assert result.manifest.no_gold == {}
    report = (tmp_path / "e" / "report.md").read_text(encoding="utf-8")
    assert f"30 rows used (30 items), {len(golds) - 30} rows name no item of this dataset" in report
    assert "the answer file then gave 30 items theirs" in report
    nothing = tmp_path / "none.csv"
    nothing.write_text("id,answer\n9999,A\n", encoding="utf-8")
    with pytest.raises(InputError, match="no row names an item") as caught:
        asyncio.run(run_eval(sim, EvalOptions(models=["scripted:release-oracle"],
                                              fmt="cpg-eval", answers=nothing)))  # fmt: skip
    assert (caught.value.line, caught.value.field) == (2, "id")


def oracle(path, golds):
    """A scripted model that knows the release's answers."""
    by_question = {}
    for item in read_dataset(path, "cpg-eval").items:
        by_question[item.prompt.vars["text"]] = golds[item.meta["source_id"]]

    def respond(request: ChatRequest) -> str:
        return by_question[request.messages[-1].content]

    return respond


def test_table_3_averages_all_eight_banks_and_names_those_not_scored(tmp_path, folder):
    path, golds = folder
    ScriptedBackend.register("release-oracle", oracle(path, golds))
    whole = asyncio.run(
        run_eval(
            path,
            EvalOptions(models=["scripted:release-oracle"], fmt="cpg-eval", run_dir=tmp_path / "w"),
        )
    )
    assert whole.manifest.no_gold == {"SIM-GRA": 5, "CAT-GRA": 10}
    report = (tmp_path / "w" / "report.md").read_text(encoding="utf-8")
    random = whole.manifest.random_baselines
    chance = sum(random[b] for b in BANKS) / 8
    assert random["CAT-GRA"] == pytest.approx((10 * 0.5 + 10 * 0.5 + 5 * 1.0) / 25)
    row = next(line for line in report.splitlines() if line.startswith("| RANDOM | 0.500"))
    assert row.endswith(f"| {chance:.3f} |")
    oracle_row = next(line for line in report.splitlines() if line.startswith("| scripted:"))
    cells = [float(c) for c in oracle_row.strip("|").split("|")[1:]]
    assert cells[8] == pytest.approx(sum(cells[:8]) / 8, abs=6e-4)
    # the derived golds are the release's; SINGLE and BATCH ask one question twice (a 吧
    # point's sentence against the other 吧 point of its group), T in one bank, F in the other
    assert cells[4:8] == [1.0, 1.0, 1.0, 1.0] and min(cells[:4]) < 1.0
    assert "Average is the mean of all 8 columns, as the paper takes it" in report
    assert "## CPG-EVAL files read" in report and "`notes.csv`" in report
    assert "| SIM-GRA | the option naming the label" in report

    ScriptedBackend.register(
        "half-read", lambda r: "A" if "他" in r.messages[-1].content.split("”")[0] else "不知道"
    )
    alone = asyncio.run(
        run_eval(
            path / "3-SIM-GRA.csv",
            EvalOptions(models=["scripted:half-read"], fmt="cpg-eval", run_dir=tmp_path / "s"),
        )
    )
    assert alone.manifest.no_gold == {"SIM-GRA": 30}
    report = (tmp_path / "s" / "report.md").read_text(encoding="utf-8")
    assert "no Average, since this run did not score SINGLE-T (not in this run)" in report
    assert "SIM-GRA (no gold answers)" in report
    invalid = report.split("## CPG-EVAL invalid answers", 1)[1]
    assert re.search(r"\| scripted:half-read \| 0\.\d{3} \|", invalid)
    scores = [json.loads(line) for line in (tmp_path / "s" / "scores.jsonl").open()]
    share = sum(s["invalid"] for s in scores) / len(scores)
    assert 0 < share < 1 and f"| scripted:half-read | {share:.3f} |" in invalid


def _results_file(path) -> None:
    """A CSV like the one at the top of the release's checkout: the authors' results, whose
    `QuestionBank` column would make it look like a lite file."""
    path.write_text(
        "\ufeffUID,Num_sentences,prompt,answer,QuestionBank,Lv\n"
        '8,S-1001-8,"请判断：在句子“\n\n我会游泳。\n\n”中，是否包含语法点[能愿动词：会]?",T,'
        "1-1-SINGLE-T,S\n",
        encoding="utf-8",
    )


@pytest.mark.parametrize("under", ["", "CPG-EVAL-main"])
def test_the_release_s_checkout_is_read_from_its_question_bank(tmp_path, under):
    checkout = tmp_path / "checkout"
    top = checkout / under if under else checkout
    release.write_release(top / "question_bank")
    _results_file(top / "CPG-EVAL-core&results.csv")
    (top / "group_ranking").mkdir()
    _results_file(top / "group_ranking" / "mixed_model.csv")
    (checkout / "__MACOSX" / "question_bank").mkdir(parents=True)  # an archive's leftovers
    whole = read_dataset(checkout, "cpg-eval")
    alone = read_dataset(top / "question_bank", "cpg-eval")
    assert [i.model_dump() for i in whole.items] == [i.model_dump() for i in alone.items]
    assert whole.info["skipped"] == [
        "/".join(p for p in (under, "question_bank", "notes.csv") if p)
    ]
    assert Counter(i.task for i in whole.items) == Counter(
        {bank: len(rows) for bank, rows in release.questions().items()}
    )


def test_a_folder_without_bank_files_or_a_question_bank_is_one_error(tmp_path):
    empty = tmp_path / "checkout"
    (empty / "resources").mkdir(parents=True)
    with pytest.raises(InputError, match="nor a question_bank/ folder holding them"):
        read_dataset(empty, "cpg-eval")
    for name in ("a", "b"):
        release.write_release(empty / name / "question_bank")
    with pytest.raises(InputError, match="two question_bank/ folders"):
        read_dataset(empty, "cpg-eval")


def test_every_released_item_names_its_grammar_point_as_its_question_does(folder):
    path, _ = folder
    dataset = read_dataset(path, "cpg-eval")
    labels = {p.label for p in release.POINTS}
    for item in dataset.items:
        if item.task in ("SIM-GRA", "CAT-GRA"):
            options = {o["key"]: o["text"] for o in item.meta["options"]}
            # the gold option's label where the release determines the gold, else none
            assert item.meta.get("point") == (options[item.answer] if item.answer else None)
        else:
            assert item.meta["point"] == item.meta["point_label"] in labels
            assert f"语法点[{item.meta['point']}]" in item.prompt.vars["text"]
    points = Counter(i.meta.get("point") for i in dataset.items)
    assert points["能愿动词：会"] >= 5 and None in points  # the ambiguous 吧 questions: none


def test_a_profile_joins_the_release_s_items_by_the_point_their_questions_name(tmp_path, folder):
    from gramagents.profiles.compute import Settings, weakest_points
    from gramagents.profiles.scores import read_entry

    path, _ = folder
    ScriptedBackend.register("release-says-t", lambda request: "T")
    asyncio.run(
        run_eval(
            path,
            EvalOptions(models=["scripted:release-says-t"], fmt="cpg-eval", run_dir=tmp_path / "e"),
        )
    )
    rows = read_entry(tmp_path / "e", "cpg-eval", "cpg-eval", set(BANKS))
    assert rows and all(r.point for r in rows if r.task not in ("SIM-GRA", "CAT-GRA"))
    weakest = weakest_points(rows, Settings(boot=50))["scripted:release-says-t"]
    assert weakest and {p["point"] for p in weakest} <= {
        f"cpg-eval:{p.label}" for p in release.POINTS
    }
    assert all({"SINGLE-F", "BATCH-F"} & set(p["tasks"]) for p in weakest[:1])  # T is wrong there
