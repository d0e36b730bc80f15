"""The pattern language over trees (the paper's Figure 3): each operator, captures and errors."""

from __future__ import annotations

import re

import pytest
from nltk import Tree

from gramagents.errors import InputError
from gramagents.recipes.syntax.patterns import PatternError, compile_pattern, find_all
from gramagents.recipes.syntax.points import load_points
from gramagents.recipes.syntax.trees import ParsedTree, convert

SENTENCE = (
    "(S (NP-SBJ (DT The) (NN dog)) (VP (MD will) (VP (VB chase) (NP (DT the) (NN cat)) "
    "(ADVP-MNR (RB quickly)) (PP-LOC (IN in) (NP (DT the) (NN garden))))) (. .))"
)


@pytest.fixture(scope="module")
def tree() -> ParsedTree:
    return convert(Tree.fromstring(SENTENCE))


def texts(tree: ParsedTree, pattern: str, capture: str, names: dict | None = None) -> list[str]:
    compiled = compile_pattern(pattern, names)
    return [tree.text(c[capture].words) for c in find_all(compiled, tree.nodes)]


def test_exact_labels_match_whole_labels_only(tree):
    assert texts(tree, "NP=x", "x") == ["the cat", "the garden"]  # not NP-SBJ
    assert texts(tree, "NP-SBJ=x", "x") == ["The dog"]


def test_a_family_matches_every_label_it_starts(tree):
    assert texts(tree, "VB@=x", "x") == ["chase"]
    assert texts(tree, "NP@=x", "x") == ["The dog", "the cat", "the garden"]


def test_function_tags_on_any_category(tree):
    assert texts(tree, ".-MNR=x", "x") == ["quickly"]
    assert texts(tree, ".-LOC|.-MNR=x", "x") == ["quickly", "in the garden"]


def test_children_match_in_order_and_all_of_them(tree):
    # the clause: a subject, a VP, a full stop; nothing else may come between
    assert texts(tree, "(S NP-SBJ=x VP '.')", "x") == ["The dog"]
    assert texts(tree, "(S NP-SBJ=x VP)", "x") == []
    assert texts(tree, "(S NP-SBJ=x '.' VP)", "x") == []


def test_star_repeats_horizontally_zero_or_more_times(tree):
    assert texts(tree, "(VP .* NP=x .*)", "x") == ["the cat"]
    assert texts(tree, "(VP VB .* PP-LOC=x)", "x") == ["in the garden"]
    assert texts(tree, "(VP VB NP ~PP-LOC* PP-LOC=x)", "x") == ["in the garden"]
    assert texts(tree, "(VP VB NP ~ADVP-MNR* PP-LOC=x)", "x") == []


def test_descent_goes_down_through_nodes_of_the_same_label(tree):
    # from the clause's VP down its chain of VPs to the one with the object
    assert texts(tree, "(S .* (VP=top >* (VP .* NP=x .*)) .*)", "x") == ["the cat"]
    # zero times: the VP itself
    assert texts(tree, "(VP >* (VP MD=x .*))", "x") == ["will"]
    # only through the same label: an NP is not reached from the VP through the PP
    assert texts(tree, "(VP >* (PP-LOC .* NP=x))", "x") == []


def test_negation_conjunction_and_named_labels(tree):
    names = {"ADVERBIAL": ".-MNR | .-LOC"}
    assert texts(tree, "$ADVERBIAL=x", "x", names) == ["quickly", "in the garden"]
    assert texts(tree, "(VP VB .* ~$ADVERBIAL=x .*)", "x", names) == ["the cat"]
    assert texts(tree, "NP@&~NP-SBJ=x", "x") == ["the cat", "the garden"]


def test_any_node_matches_words_too(tree):
    assert texts(tree, "(RB .=x)", "x") == ["quickly"]
    assert texts(tree, "(RB RB=x)", "x") == []  # a word is no tag


def test_every_way_a_pattern_matches_is_found_once(tree):
    # each child of each VP once, though `.* . .*` could split the children many ways
    assert texts(tree, "(VP .* .=x .*)", "x") == [
        "will", "chase the cat quickly in the garden",
        "chase", "the cat", "quickly", "in the garden",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("(S NP", "ends too early"),
        ("(S NP))", "unexpected ')'"),
        ("(S* NP)", "repeats a child"),
        ("(S >* )", "where a node was expected"),
        ("(S NP=)", "a capture is a name"),
        ("(S $NOPE)", "unknown named label"),
        ("(S @)", "needs a label"),
        ("(S NP||VP)", "empty side"),
    ],
)
def test_a_pattern_that_cannot_be_read_says_why(pattern, says):
    with pytest.raises(PatternError, match=re.escape(says)):
        compile_pattern(pattern, {})


def test_a_bad_pattern_in_the_patterns_file_names_its_line_and_field(in_tmp):
    (in_tmp / "prompts" / "syntax").mkdir(parents=True)
    (in_tmp / "prompts" / "syntax" / "patterns.yaml").write_text(
        "points:\n"
        "  GS:\n"
        "    name: grammatical subject\n"
        "    patterns:\n"
        '      - match: "(S .* .-SBJ=answer .* VP=verb .*)"\n'
        "        answer: {text: answer}\n"
        "        anchor: {verbs: [verb]}\n"
        '      - match: "(S .-SBJ=answer (VP"\n'
        "        answer: {text: answer}\n"
        "        anchor: {text: answer}\n"
    )
    with pytest.raises(InputError) as caught:
        load_points("syntax/patterns.yaml")
    assert caught.value.line == 8
    assert caught.value.field == "points.GS.patterns[1].match"


def test_a_capture_the_pattern_lacks_is_an_error(in_tmp):
    (in_tmp / "prompts" / "syntax").mkdir(parents=True)
    (in_tmp / "prompts" / "syntax" / "patterns.yaml").write_text(
        "points:\n  GS:\n    name: x\n    patterns:\n"
        '      - match: "(S .-SBJ=answer VP)"\n'
        "        answer: {text: answer}\n"
        "        anchor: {verbs: [verb]}\n"
    )
    with pytest.raises(InputError, match="captures no 'verb'"):
        load_points("syntax/patterns.yaml")
