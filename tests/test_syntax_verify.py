"""The distractor verifier: only questions whose key alone is right are kept.

Questions are written by hand against hand-written trees (each check once passing and once
failing); then a build whose wrong answers are chosen carelessly shows the verifier dropping
what it must, counting it, and leaving no question with a second right answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nltk import Tree

from gramagents.recipes.syntax import filters
from gramagents.recipes.syntax.points import load_points
from gramagents.recipes.syntax.records import SyntaxQuestion
from gramagents.recipes.syntax.trees import convert
from gramagents.recipes.syntax.verify import Verifier
from gramagents.workflow.build import BuildOptions, run_build

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "syntax"
TREE = """( (S (NP-SBJ (DT The) (NN finding) )
    (ADVP (RB probably) )
    (VP (MD will) (VP (VB support) (NP (DT the) (NN plan) ) (ADVP-TMP (RB soon) )))
    (. .) ))"""


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    tree = convert(Tree.fromstring(TREE, remove_empty_top_bracketing=True))
    return Verifier({"t#1": tree}, load_points("syntax/patterns.yaml"))


def question(kind: str, point: str, anchor: str, phrase: str, **fields) -> SyntaxQuestion:
    return SyntaxQuestion(
        id="t#1/q", match_id="t#1/m", tree_id="t#1", point=point, type=kind, role="test",
        category="", sentence="", question="", answer=fields.pop("answer", phrase),
        phrase=phrase, anchor=anchor, blank="", **fields,
    )  # fmt: skip


def options(*texts: str) -> list[dict[str, str]]:
    return [{"key": key, "text": text} for key, text in zip("ABCD", texts, strict=True)]


def test_a_multiple_choice_question_with_a_second_right_option_is_refused(verifier):
    good = question("MC", "ADV", "will support", "soon", answer="A",
                    options=options("soon", "the plan", "The finding", "support"))  # fmt: skip
    assert verifier.problem(good) is None
    # "probably" is an adverbial of "will support" too
    bad = question("MC", "ADV", "will support", "soon", answer="A",
                   options=options("soon", "probably", "the plan", "The finding"))  # fmt: skip
    assert verifier.problem(bad) == "second right option"


def test_options_that_read_the_same_are_refused(verifier):
    alike = question("MC", "GS", "will support", "The finding", answer="A",
                     options=options("The finding", "the plan", "The plan", "soon"))  # fmt: skip
    assert verifier.problem(alike) == "options alike"


def test_a_false_statement_must_assert_a_wrong_phrase(verifier):
    wrong = question("TF", "ADV", "will support", "soon", answer="False", form="incorrect",
                     asserted="the plan")  # fmt: skip
    assert verifier.problem(wrong) is None
    right = question("TF", "ADV", "will support", "soon", answer="False", form="incorrect",
                     asserted="probably")  # fmt: skip
    assert verifier.problem(right) == "wrong statement is right"


def test_fill_in_the_blank_needs_the_only_right_answer(verifier):
    assert verifier.problem(question("FITB", "GS", "will support", "The finding")) is None
    several = question("FITB", "ADV", "will support", "soon")
    assert verifier.problem(several) == "several right answers"
    assert verifier.right_answers(several) == {("soon",), ("probably",)}


def test_a_key_no_pattern_gives_is_refused(verifier):
    assert verifier.problem(question("FITB", "GS", "will support", "the plan")) == "key not found"


def careless(found, pool):
    """Wrong answers as chosen before right answers were left out: every other phrase."""
    return [([c.text for c in pool if not c.words & set(m.answer.words)], 0, True) for m in found]


def test_a_build_with_careless_wrong_answers_keeps_no_question_with_two_right_ones(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(filters, "wrong_answers", careless)
    result = asyncio.run(
        run_build("syntax-qa", BuildOptions(source=EXAMPLES, agents=False, run_dir=tmp_path / "b"))
    )
    stage = result.manifest.stages["questions"]
    dropped = {k: v for k, v in stage.items() if k.startswith("dropped")}
    assert dropped.get("dropped FITB: several right answers", 0) > 0
    assert dropped.get("dropped MC: second right option", 0) > 0
    assert stage["verified"] >= stage["test MC"] + sum(dropped.values())
    report = (tmp_path / "b" / "report.md").read_text()
    assert f"dropped {sum(dropped.values())}:" in report
    # what was kept passes the check, whatever the wrong answers were
    from gramagents.recipes.syntax.reader import TREES, read_treebank
    from gramagents.sources import ReadOptions

    trees = read_treebank(EXAMPLES, ReadOptions()).context[TREES]
    check = Verifier(trees, load_points("syntax/patterns.yaml"))
    kept = [
        SyntaxQuestion.model_validate_json(line)
        for line in (tmp_path / "b" / "questions.jsonl").read_text().splitlines()
    ]
    assert kept and not [q.id for q in kept if not q.borrowed_from and check.problem(q)]
