"""Building the syntax-QA banks from the project's treebank: sampling, few-shot items, manifest,
the command line, and the back-checker with a scripted model."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.models.scripted import ScriptedBackend
from gramagents.workflow.build import BuildOptions, run_build

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "syntax"
RECIPE = Path(__file__).resolve().parent.parent / "graphs" / "syntax-qa.yaml"
TASKS = ("SYNTAX-TF", "SYNTAX-MC", "SYNTAX-FITB")


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def build(folder: Path, **options):
    return asyncio.run(
        run_build(
            str(options.pop("recipe", "syntax-qa")),
            BuildOptions(source=EXAMPLES, run_dir=folder, **{"agents": False, **options}),
        )
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("syntax") / "build"
    result = build(folder)
    return result, folder


def test_the_build_writes_tf_mc_and_fitb_banks_zero_and_few_shot(built):
    result, folder = built
    tasks = Counter(item.task for item in result.items)
    assert set(tasks) == {*TASKS, *(t + "-FEWSHOT" for t in TASKS)}
    assert result.manifest.tasks == dict(tasks)
    for name in ("trees.jsonl", "matches.jsonl", "questions.jsonl", "dataset.jsonl"):
        assert (folder / name).is_file()
    assert len(jsonl(folder / "trees.jsonl")) == 58
    items = jsonl(folder / "dataset.jsonl")
    assert {i["answer"] for i in items if i["task"] == "SYNTAX-TF"} == {"T", "F"}
    assert {i["answer"] for i in items if i["task"] == "SYNTAX-MC"} <= set("ABCD")


def _possible(match: dict) -> dict[str, int]:
    """How many questions of each type a match allows (the module's rules, restated)."""
    return {
        "TF": 0 if match["point"] == "MVP" else (4 if match["wrong"] else 2),
        "MC": 1 if len(match["wrong"]) >= 3 else 0,
        "FITB": 1 if match["unique"] else 0,
    }


def test_k_questions_per_type_point_and_answer_category(built):
    _, folder = built
    possible: Counter = Counter()
    for match in jsonl(folder / "matches.jsonl"):
        for kind, n in _possible(match).items():
            possible[kind, match["point"], match["category"]] += n
    questions = jsonl(folder / "questions.jsonl")
    test = Counter(
        (q["type"], q["point"], q["category"])
        for q in questions
        if q["role"] == "test" and not q["borrowed_from"]
    )
    assert test  # the paper's k = 5, or all there are
    assert all(test[group] == min(5, n) for group, n in possible.items() if n)
    exemplars = [q for q in questions if q["role"] == "exemplar"]
    test_ids = {q["id"] for q in questions if q["role"] == "test"}
    assert exemplars and not test_ids & {q["id"] for q in exemplars}


def test_mvp_true_false_questions_are_those_of_the_four_argument_points(built):
    _, folder = built
    questions = [q for q in jsonl(folder / "questions.jsonl") if q["role"] == "test"]
    mvp_tf = [q for q in questions if q["point"] == "MVP" and q["type"] == "TF"]
    lent = [q for q in questions if q["point"] in {"GS", "SC", "DO", "IO"} and q["type"] == "TF"]
    assert sorted(q["borrowed_from"] for q in mvp_tf) == sorted(q["id"] for q in lent)
    assert all(q["question"].startswith("In the above sentence, the ") for q in mvp_tf)


def test_the_manifest_counts_questions_per_type_and_point(built):
    result, folder = built
    counts = result.manifest.artifacts["syntax"]
    questions = jsonl(folder / "questions.jsonl")
    for role, key in (("test", "test"), ("exemplar", "exemplars")):
        table: dict = defaultdict(dict)
        for (kind, point), n in Counter(
            (q["type"], q["point"]) for q in questions if q["role"] == role
        ).items():
            table[kind][point] = n
        assert {k: v for k, v in counts[key].items() if v} == dict(table)
    # every point has questions of every type in the test set
    assert all(len(counts["test"][kind]) == 9 for kind in ("TF", "MC", "FITB"))
    stored = json.loads((folder / "manifest.json").read_text())
    assert stored["artifacts"]["syntax"]["test"] == counts["test"]
    assert set(stored["artifacts"]["syntax"]["files"]) == {"patterns", "questions"}
    assert stored["stages"]["extract"]["matches"] == len(jsonl(folder / "matches.jsonl"))


def test_few_shot_items_show_five_examples_of_the_same_point_and_type_per_seed(built):
    result, folder = built
    questions = {q["id"]: q for q in jsonl(folder / "questions.jsonl")}
    zero = {i.id: i for i in result.items if i.task in TASKS}
    few = [i for i in result.items if i.task.endswith("-FEWSHOT")]
    seeds: dict[str, set[int]] = defaultdict(set)
    for item in few:
        question_id, seed = item.id.rsplit("@s", 1)
        asked = questions[question_id]
        seeds[question_id].add(int(seed))
        assert item.meta["seed"] == int(seed) and question_id in zero
        assert 1 <= item.meta["shots"] == len(item.prompt.vars["shots"]) <= 5
        for example_id in item.meta["exemplars"]:
            example = questions[example_id]
            assert (example["type"], example["point"]) == (asked["type"], asked["point"])
            assert example["sentence"] != asked["sentence"]
    assert set(map(frozenset, seeds.values())) == {frozenset({1, 2, 3})}
    # five whenever the treebank has five questions of the point and type elsewhere; a few
    # rare ones (IO multiple choice: five sentences in all) show the four there are
    assert Counter(i.meta["shots"] for i in few).most_common(1)[0][0] == 5
    assert all(i.meta["shots"] == 5 for i in few if i.meta["point"] in ("GS", "DO", "MVP"))
    # the seeds draw different examples
    by_question: dict[str, set[tuple]] = defaultdict(set)
    for item in few:
        by_question[item.id.rsplit("@s", 1)[0]].add(tuple(item.meta["exemplars"]))
    assert sum(len(v) > 1 for v in by_question.values()) > len(by_question) / 2


def test_every_item_names_its_test_question_and_a_few_shot_questions_seeds_share_it(built):
    result, folder = built
    test = {q["id"] for q in jsonl(folder / "questions.jsonl") if q["role"] == "test"}
    for item in result.items:
        # a borrowed copy (MVP's True/False) names its lender's question
        asked = item.meta.get("borrowed_from") or item.id.split("@s")[0]
        assert item.meta["question"] == asked and item.meta["question"] in test
    assert any("borrowed_from" in i.meta for i in result.items)
    few = Counter(i.id.split("@s")[0] for i in result.items if i.task.endswith("-FEWSHOT"))
    zero = {i.id for i in result.items if not i.task.endswith("-FEWSHOT")}
    assert set(few) == zero and set(few.values()) == {3}


def test_the_random_fitb_baseline_of_an_item_is_that_of_a_random_span(built):
    from gramagents.recipes.syntax.builder import random_span

    result, _ = built
    for item in (i for i in result.items if i.task == "SYNTAX-FITB"):
        expected = random_span(item.prompt.vars["sentence"], item.answer)
        assert (item.meta["random_acc"], item.meta["random_f1"]) == (
            expected["random_acc"],
            expected["random_f1"],
        )
        assert 0 < item.meta["random_f1"] < 1


def report_table(report: str, title: str) -> list[list[str]]:
    section = report.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def test_the_build_report_sets_its_counts_beside_the_papers_tables_1_and_4(built):
    result, folder = built
    info = result.manifest.artifacts["syntax"]
    report = (folder / "report.md").read_text()
    rows = report_table(report, "Syntax-QA questions beside the paper's Tables 1 and 4")
    by_key = {(r[0], r[1]): r[2:] for r in rows}
    assert by_key["MC", "GS"][0] == "106708" and by_key["MC", "GS"][4] == "105"
    assert by_key["FITB", "ADJ"][0] == "58401" and by_key["FITB", "ADJ"][4] == "135"
    for (kind, point), cells in by_key.items():
        assert int(cells[2]) == info["candidates"][kind].get(point, 0)
        assert int(cells[6]) == info["test"][kind].get(point, 0)
    # the groups the sampling balances: per category, all questions and those drawn
    categories = report_table(report, "Syntax-QA questions per answer category")
    assert categories == [[str(c) for c in row] for row in info["categories"]]
    alls: Counter = Counter()
    drawn: Counter = Counter()
    for kind, point, _, every, test, _ in info["categories"]:
        alls[kind, point] += every
        drawn[kind, point] += test
    for kind, points in info["candidates"].items():
        own = {p: n for p, n in points.items() if (kind, p) != ("TF", "MVP")}
        assert {p: alls[kind, p] for p in own} == own
    # MVP's True/False questions are those of GS, SC, DO and IO, as in the paper's Table 4
    lent = info["candidates"]["TF"]
    assert lent["MVP"] == sum(lent[p] for p in ("GS", "SC", "DO", "IO")) > 0
    own = Counter(
        (q["type"], q["point"])
        for q in jsonl(folder / "questions.jsonl")
        if q["role"] == "test" and not q["borrowed_from"]
    )
    assert +drawn == own
    assert "The distractor verifier checked" in report


def test_items_alternate_between_points_so_a_limit_sees_them_all(built):
    result, _ = built
    first = [i.meta["point"] for i in result.items if i.task == "SYNTAX-FITB"][:9]
    assert sorted(first) == sorted(["GS", "SC", "DO", "IO", "MVP", "ADJ", "ADV", "CO", "PPA"])


def test_the_same_seed_builds_the_same_banks_and_another_seed_others(built, tmp_path):
    result, _ = built
    again = build(tmp_path / "again")
    assert again.manifest.hashes["dataset"] == result.manifest.hashes["dataset"]
    other = build(tmp_path / "other", seed=7)
    assert other.manifest.hashes["dataset"] != result.manifest.hashes["dataset"]


def test_gramagents_build_by_name_and_by_path(in_tmp):
    runner = CliRunner()
    for recipe, folder in (("syntax-qa", "by-name"), (str(RECIPE), "by-path")):
        outcome = runner.invoke(
            app,
            ["build", recipe, "--source", str(EXAMPLES), "--agents", "off", "--run-dir", folder],
        )
        assert outcome.exit_code == 0, outcome.output
        assert "SYNTAX-FITB-FEWSHOT" in outcome.output
    assert (in_tmp / "by-name" / "dataset.jsonl").read_bytes() == (
        in_tmp / "by-path" / "dataset.jsonl"
    ).read_bytes()


def test_a_malformed_tree_stops_the_build_with_one_line_and_no_run_folder(in_tmp):
    source = in_tmp / "bank"
    source.mkdir()
    (source / "a.mrg").write_text("(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\n")
    (source / "b.mrg").write_text("\n(S (NP-SBJ (PRP I))\n (VP (VBP run) (. .))\n")
    outcome = CliRunner().invoke(
        app, ["build", "syntax-qa", "--source", str(source), "--agents", "off", "--run-dir", "out"]
    )
    assert outcome.exit_code == 2
    assert re.search(r"b\.mrg:2: the tree starting here is never closed", outcome.output)
    assert "Traceback" not in outcome.output and not (in_tmp / "out").exists()


# --- the back-checker -------------------------------------------------------------------------


def backchecker(request) -> str:
    """Calls a PP attachment ambiguous in the two sentences the paper and this file discuss;
    its first verdict on "hide" names a phrase that is not in the sentence, and is re-asked."""
    text = "\n".join(m.content for m in request.messages)
    sentence = re.search(r"^Sentence: (.*)$", text, re.M).group(1)
    answer = re.search(r"^The parse's answer: (.*)$", text, re.M).group(1)
    if sentence == "I hide the book on my shelf.":
        if "copy the other answer from the sentence" not in text:
            return json.dumps({"ambiguous": True, "other_answer": "the shelf book", "reason": "x"})
        return json.dumps(
            {"ambiguous": True, "other_answer": "the book", "reason": "Which book, or where."}
        )
    if sentence == "She saw the man with the telescope.":
        return json.dumps(
            {"ambiguous": True, "other_answer": "the man", "reason": "Who had the telescope?"}
        )
    if sentence == "He ate the pizza with a fork.":
        return "I cannot say."  # never a valid verdict: recorded as failed
    return json.dumps({"ambiguous": False, "other_answer": "", "reason": f"Only {answer} fits."})


ScriptedBackend.register("syntax-backchecker", backchecker)


def test_the_back_checker_flags_ambiguous_questions_and_keeps_its_verdicts(in_tmp):
    result = build(in_tmp / "checked", agents=True, agent_model="scripted:syntax-backchecker")
    stage = result.manifest.stages["backcheck"]
    questions = jsonl(in_tmp / "checked" / "questions.jsonl")
    ppa = [q for q in questions if q["role"] == "test" and q["point"] == "PPA"]
    assert stage["planned"] == len({q["match_id"] for q in ppa})
    assert stage["planned"] == stage["unambiguous"] + stage["ambiguous"] + stage["failed"]
    assert all(q["checks"] for q in ppa)  # every PPA test question carries a verdict
    assert not any(q["checks"] for q in questions if q["point"] != "PPA")
    by_sentence = defaultdict(list)
    for question in ppa:
        by_sentence[question["sentence"]].append(question)
    for question in by_sentence["I hide the book on my shelf."]:
        [verdict] = question["checks"]
        assert verdict["passed"] is False and verdict["details"]["other_answer"] == "the book"
        assert question["flags"] == ["ambiguous: “the book” could also be the answer"]
    for question in by_sentence["He ate the pizza with a fork."]:
        [verdict] = question["checks"]
        assert verdict["passed"] is False and verdict["reason"].startswith("no valid verdict")
        assert not question["flags"]
    for question in by_sentence["I like the book on my shelf."]:
        assert question["checks"][0]["passed"] is True and not question["flags"]
    # the flags travel with the items
    items = [i for i in result.items if i.meta["point"] == "PPA"]
    flagged = {i.id for i in items if i.meta["flags"]}
    assert flagged and all(
        i.meta["checks"][0]["details"]["ambiguous"] for i in items if i.id in flagged
    )
    assert result.manifest.artifacts["syntax"]["flagged"] == sum(1 for q in ppa if q["flags"])
    [failure] = jsonl(in_tmp / "checked" / "failures.jsonl")
    assert failure["agent"] == "syntax-backcheck" and failure["match"].endswith("/PPA1")
    assert failure["questions"] == [q["id"] for q in by_sentence["He ate the pizza with a fork."]]


def test_the_back_checker_can_take_ambiguous_questions_out(in_tmp):
    text = RECIPE.read_text().replace("remove: false", "remove: true")
    (in_tmp / "graphs").mkdir()
    (in_tmp / "graphs" / "strict.yaml").write_text(text)
    kept = build(in_tmp / "kept", agents=True, agent_model="scripted:syntax-backchecker")
    removed = build(
        in_tmp / "removed",
        recipe="strict",
        agents=True,
        agent_model="scripted:syntax-backchecker",
    )
    ambiguous = {i.id for i in kept.items if i.meta["flags"]}
    assert ambiguous and not ambiguous & {i.id for i in removed.items}
    assert len(removed.items) == len(kept.items) - len(ambiguous)


def test_agents_off_asks_no_model_and_checks_nothing(built):
    result, folder = built
    assert result.manifest.counts.requests_sent == 0 and result.manifest.agents == "off"
    assert not any(q["checks"] for q in jsonl(folder / "questions.jsonl"))
