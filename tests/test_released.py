"""The released CPG-EVAL file layout: reading, gold answers, scoring and the Table 3 report."""

import asyncio
import json
import subprocess
import sys
from collections import Counter

import pytest

from gramagents.errors import InputError
from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.cpg.released_writer import write_answers, write_released
from gramagents.records import ChatRequest
from gramagents.sources.datasets import read_dataset
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import EXAMPLE_TABLE

BANKS = [
    "SINGLE-T",
    "SINGLE-F",
    "BATCH-T",
    "BATCH-F",
    "SIM-GRA",
    "CAT-GRA",
    "CON-INS-F10",
    "CON-INS-T5F5",
]


@pytest.fixture(scope="module")
def chinese_items(tmp_path_factory):
    run = tmp_path_factory.mktemp("build")
    result = asyncio.run(
        run_build("cpg", BuildOptions(source=EXAMPLE_TABLE, agents=False, run_dir=run / "b"))
    )
    return [i for i in result.items if i.meta["language"] == "zh"]


@pytest.fixture
def released(tmp_path, chinese_items):
    folder = tmp_path / "question_bank"
    answers = write_released(chinese_items, folder)
    return folder, answers


def test_every_bank_file_is_read_with_the_golds_it_implies(released, chinese_items):
    folder, answers = released
    dataset = read_dataset(folder, "cpg-eval")
    counts = Counter(i.task for i in dataset.items)
    assert counts == Counter(i.task for i in chinese_items)
    for bank in ("SIM-GRA", "CAT-GRA", "CON-INS-T5F5"):  # derived from the other banks
        derived = dataset.info["golds"][bank]
        assert (derived["derived"], derived["ambiguous"], derived["missing"]) == (
            counts[bank],
            0,
            0,
        )
    for item in dataset.items:
        gold = answers[item.meta["source_id"]]
        assert item.answer == gold
        assert item.prompt.template == "raw.md"
        if item.task.startswith(("BATCH", "CON-INS")):
            assert item.meta["n"] == len(gold)
        if item.task in ("SIM-GRA", "CAT-GRA"):
            assert gold in [o["key"] for o in item.meta["options"]]
        if item.task not in ("SIM-GRA",):
            assert item.meta["category"] in {"能愿动词", "疑问代词", "程度副词"}


def test_the_lite_file_names_the_bank_per_row(tmp_path, chinese_items):
    write_released(chinese_items, tmp_path, lite=True)
    dataset = read_dataset(tmp_path / "lite.csv", "cpg-eval")
    assert Counter(i.task for i in dataset.items) == Counter(i.task for i in chinese_items)


def answer_from(answers_by_question: dict[str, str]):
    def respond(request: ChatRequest) -> str:
        return answers_by_question[request.messages[-1].content]

    return respond


def test_eval_scores_released_banks_and_reports_table_3(tmp_path, released):
    folder, answers = released
    dataset = read_dataset(folder, "cpg-eval")
    by_question = {i.prompt.vars["text"]: answers[i.meta["source_id"]] for i in dataset.items}
    ScriptedBackend.register("oracle", answer_from(by_question))

    sim = next(folder.glob("*SIM-GRA.csv"))  # alone: nothing to derive its golds from
    without = asyncio.run(
        run_eval(
            sim,
            EvalOptions(models=["scripted:oracle"], fmt="cpg-eval", run_dir=tmp_path / "no-gold"),
        )
    )
    counts = Counter(i.task for i in dataset.items)
    assert without.manifest.no_gold == {"SIM-GRA": counts["SIM-GRA"]}
    report = (tmp_path / "no-gold" / "report.md").read_text(encoding="utf-8")
    assert "Items without a gold answer" in report and f"SIM-GRA {counts['SIM-GRA']}" in report

    answer_file = write_answers(answers, tmp_path / "answers.csv")
    result = asyncio.run(
        run_eval(
            folder,
            EvalOptions(
                models=["scripted:oracle"],
                fmt="cpg-eval",
                answers=answer_file,
                run_dir=tmp_path / "e",
            ),
        )
    )
    assert result.manifest.no_gold == {} and result.manifest.status == "complete"
    summary = {r["task"]: r for r in json.loads((tmp_path / "e" / "summary.json").read_text())}
    assert set(summary) == set(BANKS)
    assert all(r["score"] == 1.0 and r["invalid_rate"] == 0.0 for r in summary.values())
    report = (tmp_path / "e" / "report.md").read_text(encoding="utf-8")
    assert "## CPG-EVAL Table 3 layout" in report
    sizes = {  # the headers state the batches' real sizes, not the paper's nine
        task: "/".join(
            str(n) for n in sorted({i.meta["n"] for i in dataset.items if i.task == task})
        )
        for task in ("BATCH-T", "BATCH-F", "CON-INS-F10")
    }
    assert sizes["BATCH-T"] != "9"  # the example table has points of fewer than nine sentences
    assert (
        f"| Model | SINGLE T | SINGLE F | BATCH T×{sizes['BATCH-T']} | "
        f"BATCH F×{sizes['BATCH-F']} | SIM-GRA | CAT-GRA | CON-INS F×{sizes['CON-INS-F10']} | "
        "CON-INS T×5&F×5 | Average |"
    ) in report
    assert "| scripted:oracle | " + " | ".join(["1.000"] * 9) + " |" in report
    random_row = next(line for line in report.splitlines() if line.startswith("| RANDOM | 0.500"))
    assert "| 0.200 | 0.250 |" in random_row  # SIM-GRA 1/5; CAT-GRA 1/4 options
    html = (tmp_path / "e" / "report.html").read_text(encoding="utf-8")
    assert '<table data-table="layout:CPG-EVAL Table 3 layout">' in html
    assert (tmp_path / "e" / "view" / "data" / "run0" / "items" / "index.js").is_file()


def test_bad_answer_files_name_the_line(tmp_path, released):
    folder, answers = released
    sim_id = next(i for i, a in answers.items() if a in "ABCDE")
    bad = tmp_path / "bad.csv"
    bad.write_text(f"id,answer\n{sim_id},Z\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        asyncio.run(
            run_eval(
                folder,
                EvalOptions(
                    models=["scripted:oracle"], fmt="cpg-eval", answers=bad, run_dir=tmp_path / "x"
                ),
            )
        )
    assert caught.value.line == 2 and caught.value.field == "answer"
    assert "one of the options" in str(caught.value)
    assert not (tmp_path / "x").exists()
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("id,answer\n999999,T\n", encoding="utf-8")
    with pytest.raises(InputError, match="no row names an item of the dataset"):
        asyncio.run(
            run_eval(
                folder, EvalOptions(models=["scripted:oracle"], fmt="cpg-eval", answers=unknown)
            )
        )


def test_malformed_released_files_are_one_clear_error(tmp_path):
    bank = tmp_path / "1-1-SINGLE-T.csv"
    bank.write_text("\ufeffid,prompt\n1,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column question") as caught:
        read_dataset(tmp_path, "cpg-eval")
    assert caught.value.line == 1
    lite = tmp_path / "other" / "lite.csv"
    lite.parent.mkdir()
    lite.write_text("id,question,QuestionBank\n1,x,9-NOTHING\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dataset(lite, "cpg-eval")
    assert (caught.value.line, caught.value.field) == (2, "QuestionBank")


@pytest.mark.slow
def test_the_embedded_model_runs_every_released_bank(tmp_path, released):
    folder, _ = released
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "eval",
            str(folder),
            "--format",
            "cpg-eval",
            "--model",
            "smollm2",
            "--limit",
            "20",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert set(manifest["tasks"]) == set(BANKS)
    assert all(n <= 20 for n in manifest["tasks"].values())
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    row = next(line for line in report.splitlines() if line.startswith("| smollm2 |"))
    assert row.count("|") == 11  # model, eight banks, average
