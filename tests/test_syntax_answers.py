"""Answers, wrong answers and categories on hand-written trees in the Wall Street Journal layout.

Each tree is written for the shape it tests, the way the treebank annotates it (trace
indices, empty elements, escapes, function tags in either order): a mid-position adverb, an
escaped slash and brackets, a particle, verbs and verb phrases coordinated, an appositive
subject, and the two orders of a label's function tags.
"""

from __future__ import annotations

import pytest
from nltk import Tree

from gramagents.recipes.syntax.builder import random_span
from gramagents.recipes.syntax.categories import chain_shape
from gramagents.recipes.syntax.metrics import fitb_scores
from gramagents.recipes.syntax.points import (
    candidates,
    find_matches,
    load_points,
    wrong_answers,
)
from gramagents.recipes.syntax.trees import ParsedTree, convert, split_label


@pytest.fixture(scope="module")
def points():
    return load_points("syntax/patterns.yaml")


def parsed(text: str) -> ParsedTree:
    return convert(Tree.fromstring(text, remove_empty_top_bracketing=True))


def answers(tree: ParsedTree, points, point: str) -> dict[str, set[str]]:
    """Anchor to the answers the patterns find for one point."""
    found: dict[str, set[str]] = {}
    for match in find_matches(tree, points):
        if match.point == point:
            found.setdefault(match.anchor.text, set()).add(match.answer.text)
    return found


def questions(tree: ParsedTree, points, point: str) -> list[tuple[str, str, list[str], bool]]:
    """(anchor, answer, wrong answers, unique) of each match of a point."""
    found = find_matches(tree, points)
    rows = zip(found, wrong_answers(found, candidates(tree)), strict=True)
    return [
        (m.anchor.text, m.answer.text, wrong, unique)
        for m, (wrong, _, unique) in rows
        if m.point == point
    ]


MID_POSITION = """( (S (NP-SBJ (DT The) (NN finding) )
    (ADVP (RB probably) )
    (VP (MD will)
      (ADVP (RB also) )
      (VP (VB support) (NP (DT the) (NN plan) ) (ADVP-TMP (RB soon) )))
    (. .) ))"""


def test_mid_position_adverbs_are_adverbials_and_never_wrong_options(points):
    tree = parsed(MID_POSITION)
    assert answers(tree, points, "ADV") == {"will support": {"probably", "also", "soon"}}
    for _, _, wrong, unique in questions(tree, points, "ADV"):
        assert not {"probably", "also", "soon"} & set(wrong)
        assert not unique  # three adverbials of one verb: no fill-in-the-blank


NEGATED = """( (S (NP-SBJ (PRP He) ) (VP (VBZ does) (RB n't) (ADVP (RB really) )
    (VP (VB know) )) (. .) ))"""


def test_a_negation_is_part_of_the_verb_phrase_not_an_adverbial(points):
    tree = parsed(NEGATED)
    assert answers(tree, points, "ADV") == {"doesn't know": {"really"}}
    assert answers(tree, points, "MVP") == {"He": {"doesn't know"}}


ESCAPED = """( (S (NP-SBJ (NNP Macmillan\\/McGraw) )
    (VP (VBD rose) (NP-EXT (CD 1\\/2) )
      (PRN (-LRB- -LRB-) (NP (CD 3) (NN %) ) (-RRB- -RRB-) )
      (PP-TMP (IN after) (NP (NP (DT the) (`` ``) (NN news) ('' '') ))))
    (. .) ))"""


def test_treebank_escapes_are_undone_in_the_sentence_and_every_answer(points):
    tree = parsed(ESCAPED)
    assert tree.sentence == 'Macmillan/McGraw rose 1/2 (3%) after the "news".'
    shown = [m.answer.text for m in find_matches(tree, points)]
    shown += [m.anchor.text for m in find_matches(tree, points)]
    shown += [c.text for c in candidates(tree)]
    assert "Macmillan/McGraw" in shown and "1/2" in shown
    for text in shown:
        assert "\\" not in text and "-LRB-" not in text and "``" not in text and "''" not in text
    # a model that answers the slash as written is right
    [subject] = [m.answer.text for m in find_matches(tree, points) if m.point == "GS"]
    assert fitb_scores("Macmillan/McGraw", subject) == {"acc": 1.0, "f1": 1.0}


PARTICLE = """( (S (NP-SBJ-1 (DT No) (NN one) )
    (VP (VBZ wants)
      (S (NP-SBJ (DT the) (NNP U.S.) )
        (VP (TO to)
          (VP (VP (VB pick) (PRT (RP up) ) (NP (PRP$ its) (NNS marbles) ))
            (CC and)
            (VP (VB go) (ADVP-DIR (RB home) ))))))
    (. .) ))"""


def test_a_particle_stays_in_the_verb_phrase_and_coordinated_verbs_keep_their_conjunction(points):
    tree = parsed(PARTICLE)
    assert answers(tree, points, "MVP")["the U.S."] == {"to pick up and go"}
    assert answers(tree, points, "DO")["to pick up"] == {"its marbles"}
    [mvp] = [m for m in find_matches(tree, points) if m.answer.text == "to pick up and go"]
    assert mvp.category == "coordinated"


WORD_COORDINATION = """( (S (NP-SBJ (PRP it) )
    (VP (VBD sought) (CC and) (VBD received) (NP (NN assistance) )
      (PP-CLR (IN from) (NP (NNS friends) )))
    (. .) ))"""

DISPLACED = """( (S (NP-SBJ (DT The) (NN house) )
    (VP (VBD passed)
      (NP (NP (DT a) (NN resolution) ) (VP (-NONE- *ICH*-1) ))
      (PP-TMP (IN in) (NP (CD 1985) ))
      (VP-1 (VBG condemning) (NP (DT the) (NN rule) )))
    (. .) ))"""

LISTED_VERBS = """( (S (NP-SBJ (NNS Workers) )
    (VP (VP (VBD dumped) (NP (NN sand) ))
      (, ,)
      (VP (VBD poured) (PRT (RP in) ) (NP (NN water) ))
      (CC and)
      (VP (VBD mixed) (NP (PRP it) )))
    (. .) ))"""


@pytest.mark.parametrize(
    ("text", "subject", "verbs", "ppa"),
    [
        # verbs coordinated as words: the conjunction is printed ("buy sell" was not)
        (WORD_COORDINATION, "it", "sought and received", {"from friends": {"sought and received"}}),
        # a VP after the object is displaced from the noun (*ICH*): it is no part of the chain
        (DISPLACED, "The house", "passed", {"in 1985": {"passed"}}),
        # three VPs: commas close up, the particle stays
        (LISTED_VERBS, "Workers", "dumped, poured in and mixed", {}),
    ],
)
def test_verb_chains_on_coordination_and_displaced_phrases(points, text, subject, verbs, ppa):
    tree = parsed(text)
    assert answers(tree, points, "MVP") == {subject: {verbs}}
    assert answers(tree, points, "PPA") == ppa


LIST = """( (S (NP-SBJ (NNS Investors) )
    (VP (VBD bought) (NP (NP (NNS stocks) ) (, ,) (NP (NNS bonds) ) (, ,) (CC and)
      (NP (NN gold) )))
    (. .) ))"""


def test_every_conjunct_of_a_list_is_right_and_none_is_a_wrong_option(points):
    tree = parsed(LIST)
    assert answers(tree, points, "CO") == {"stocks": {"bonds", "gold"}}
    for _, _, wrong, unique in questions(tree, points, "CO"):
        assert not {"bonds", "gold"} & set(wrong) and not unique


APPOSITIVE = """( (S (NP-SBJ (NP (NNP Pierre) (NNP Vinken) ) (, ,)
      (ADJP (NP (CD 61) (NNS years) ) (JJ old) ) (, ,) )
    (VP (MD will) (VP (VB join) (NP (DT the) (NN board) )
      (PP-CLR (IN as) (NP (DT a) (JJ nonexecutive) (NN director) ))
      (NP-TMP (NNP Nov.) (CD 29) )))
    (. .) ))"""


def test_the_subject_is_printed_as_the_papers_figure_1_prints_it(points):
    tree = parsed(APPOSITIVE)
    assert answers(tree, points, "GS") == {"will join": {"Pierre Vinken"}}
    assert answers(tree, points, "MVP") == {"Pierre Vinken": {"will join"}}
    [(_, _, wrong, unique)] = questions(tree, points, "GS")
    # Figure 1's options: the board, 61 years old, a nonexecutive director
    assert {"the board", "61 years old", "a nonexecutive director"} <= set(wrong) and unique
    assert "Pierre Vinken, 61 years old" not in wrong


def test_a_list_subject_is_not_cut_at_its_first_comma(points):
    tree = parsed(
        "( (S (NP-SBJ (NP (NNP Ann) ) (, ,) (NP (NNP Bo) ) (CC and) (NP (NNP Cy) ))"
        " (VP (VBD left) ) (. .) ))"
    )
    assert answers(tree, points, "GS") == {"left": {"Ann, Bo and Cy"}}


@pytest.mark.parametrize("label", ["PP-LOC-PRD", "PP-PRD-LOC"])
def test_function_tags_in_either_order_are_one_label_and_one_category(points, label):
    assert split_label(label)[0] == "PP-LOC-PRD"
    tree = parsed(
        f"( (S (NP-SBJ (PRP She) ) (VP (VBZ is) ({label} (IN in) (NP (NNP Paris) ))) (. .) ))"
    )
    [match] = [m for m in find_matches(tree, points) if m.point == "SC"]
    assert (match.answer.text, match.category) == ("in Paris", "prepositional phrase, LOC")


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("(S (NP-SBJ (PRP I)) (VP (MD will) (VP (VB go))))", "modal"),
        ("(S (NP-SBJ (PRP It)) (VP (VBZ has) (VP (VBN been) (VP (VBN sold)))))",
         "present perfect passive"),
        ("(S (NP-SBJ (PRP We)) (VP (VBP are) (VP (VBG leaving))))", "present progressive"),
        ("(S (NP-SBJ (PRP He)) (VP (VBD did) (RB n't) (VP (VB know))))", "past, negated"),
        ("(S (NP-SBJ (PRP He)) (VP (VBD sang)))", "past"),
    ],
)  # fmt: skip
def test_main_verb_phrases_are_grouped_by_shape_not_by_tag_sequence(points, text, shape):
    tree = parsed(text)
    [match] = [m for m in find_matches(tree, points) if m.point == "MVP"]
    assert match.category == shape == chain_shape(tree, match.answer.words)


def test_the_random_fitb_baseline_is_a_uniformly_random_span_of_the_sentence():
    # "A b c": six spans; "b c" is one of them; F1 per span against "b c":
    # A 0, b 2/3, c 2/3, A b 1/2, b c 1, A b c 4/5
    expected_f1 = (0 + 2 / 3 + 2 / 3 + 1 / 2 + 1 + 4 / 5) / 6
    scores = random_span("A b c.", "b c")
    assert scores["random_acc"] == pytest.approx(1 / 6)
    assert scores["random_f1"] == pytest.approx(expected_f1)


@pytest.mark.parametrize(
    ("text", "point", "category"),
    [
        # coordinated clauses take the form of the first: an infinitival relative
        ("( (S (NP-SBJ (PRP They) ) (VP (VBD set) (PRT (RP up) ) (NP (NP (NNS rules) )"
         " (SBAR (WHNP-1 (-NONE- 0) ) (S (S (NP-SBJ (-NONE- *-1) ) (VP (TO to) (VP (VB limit)"
         " (NP (NNS prices) )))) (CC and) (S (NP-SBJ (-NONE- *-1) ) (VP (TO to) (VP (VB help)"
         " (NP (NNS buyers) )))))))) (. .) ))", "ADJ", "to-infinitive relative clause"),
        ("( (S (NP-SBJ (NNS People) ) (VP (VBP say) (SBAR (IN that) (S (NP-SBJ (PRP it) )"
         " (VP (VBZ works) )))) (. .) ))", "DO", "that-clause"),
        ("( (S (NP-SBJ (NP (DT the) (NN man) ) (SBAR (WHNP-1 (WP who) ) (S (NP-SBJ (-NONE- *T*-1) )"
         " (VP (VBD left) )))) (VP (VBD smiled) ) (. .) ))", "ADJ", "relative clause (who)"),
        ("( (S (NP-SBJ (PRP He) ) (VP (VBD left) (SBAR-TMP (IN before) (S (NP-SBJ (PRP we) )"
         " (VP (VBD came) )))) (. .) ))", "ADV", "clause, TMP"),
    ],
)  # fmt: skip
def test_phrases_are_grouped_by_form_and_function(points, text, point, category):
    tree = parsed(text)
    assert category in {m.category for m in find_matches(tree, points) if m.point == point}
