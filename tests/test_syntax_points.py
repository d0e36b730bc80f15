"""Every knowledge point yields the expected phrases on the project's treebank (`examples/syntax`).

Each row is a sentence of the treebank, a knowledge point, the phrase the question is about
and the answer phrase the patterns of `prompts/syntax/patterns.yaml` must find; answers are
whole phrases, printed without empty elements or trace indices.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gramagents.recipes.syntax.points import (
    POINTS,
    candidates,
    find_matches,
    load_points,
    wrong_answers,
)
from gramagents.recipes.syntax.reader import TREES, read_treebank
from gramagents.sources import ReadOptions

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "syntax"

EXPECTED = [
    # sentence, point, what the question is about, answer
    ("Desks are cleared by John.", "GS", "are cleared", "Desks"),
    ("That he left early surprised everyone.", "GS", "surprised", "That he left early"),
    ("To forgive is divine.", "GS", "is", "To forgive"),
    ('"Prices will rise," said the economist.', "GS", "said", "the economist"),
    # the subject without its appositive, as the paper's Figure 1 has "Pierre Vinken"
    ("Maria Lopez, 45 years old, will join the council as a senior adviser next month.",
     "GS", "will join", "Maria Lopez"),
    ("John is a teacher.", "SC", "is", "a teacher"),
    ("She seems very happy.", "SC", "seems", "very happy"),
    ("The engineers who designed the bridge were proud of their work.",
     "SC", "were", "proud of their work"),
    ("John gave me a book.", "DO", "gave", "a book"),
    ("I think that the plan will work.", "DO", "think", "that the plan will work"),
    ("We enjoy reading novels.", "DO", "enjoy", "reading novels"),
    ("They wanted to leave the party.", "DO", "wanted", "to leave the party"),
    ("John gave me a book.", "IO", "gave", "me"),
    ("The teacher gave a prize to the student.", "IO", "gave", "the student"),
    ("Anna wrote her grandmother a long letter.", "IO", "wrote", "her grandmother"),
    ("Maria Lopez, 45 years old, will join the council as a senior adviser next month.",
     "MVP", "Maria Lopez", "will join"),
    ("The chairman, who resigned in May, has not commented.",
     "MVP", "The chairman", "has not commented"),
    ("The house where I grew up has been sold.",
     "MVP", "The house where I grew up", "has been sold"),
    ("I enjoy the book John gave me.", "ADJ", "the book", "John gave me"),
    ("The students who passed the exam celebrated in the park.",
     "ADJ", "The students", "who passed the exam"),
    ("The report published by the agency was criticized.",
     "ADJ", "The report", "published by the agency"),
    ("Students standing near the door should wait outside.",
     "ADJ", "Students", "standing near the door"),
    ("I read the book quickly.", "ADV", "read", "quickly"),
    ("Yesterday, the committee approved the budget.", "ADV", "approved", "Yesterday"),
    ("The company, which was founded in 1990, sold its factory last year.",
     "ADV", "sold", "last year"),
    ("The plan remains uncertain because the board has not voted.",
     "ADV", "remains", "because the board has not voted"),
    ("We will play football and watch TV.", "CO", "play football", "watch TV"),
    ("Investors bought both stocks and bonds.", "CO", "stocks", "bonds"),
    ("The soup tastes delicious but the bread is stale.",
     "CO", "The soup tastes delicious", "the bread is stale"),
    ("Tom and Jerry are friends.", "CO", "Tom", "Jerry"),
    # the paper's ambiguous pair: the same words, attached to the noun or to the verb
    ("I like the book on my shelf.", "PPA", "on my shelf", "the book"),
    ("I hide the book on my shelf.", "PPA", "on my shelf", "hide"),
    ("She saw the man with the telescope.", "PPA", "with the telescope", "saw"),
    ("She saw the man with the hat.", "PPA", "with the hat", "the man"),
]  # fmt: skip


@pytest.fixture(scope="module")
def treebank():
    data = read_treebank(EXAMPLES, ReadOptions())
    by_sentence = {r.sentence: data.context[TREES][r.id] for r in data.records}
    return data, by_sentence, load_points("syntax/patterns.yaml")


@pytest.mark.parametrize(("sentence", "point", "anchor", "answer"), EXPECTED)
def test_each_point_finds_the_expected_phrase(treebank, sentence, point, anchor, answer):
    _, by_sentence, points = treebank
    found = {
        (m.point, m.anchor.text, m.answer.text) for m in find_matches(by_sentence[sentence], points)
    }
    assert (point, anchor, answer) in found


def test_the_ppa_pair_differs_only_in_where_the_phrase_attaches(treebank):
    _, by_sentence, points = treebank
    attachments = {}
    for sentence in ("I like the book on my shelf.", "I hide the book on my shelf."):
        [ppa] = [m for m in find_matches(by_sentence[sentence], points) if m.point == "PPA"]
        attachments[sentence] = (ppa.answer.text, ppa.category)
    assert attachments == {
        "I like the book on my shelf.": ("the book", "noun phrase"),
        "I hide the book on my shelf.": ("hide", "present"),
    }


def test_the_treebank_covers_all_nine_points(treebank):
    data, by_sentence, points = treebank
    assert len(data.records) >= 40
    seen = {m.point for tree in by_sentence.values() for m in find_matches(tree, points)}
    assert seen == set(POINTS)


def test_no_answer_is_an_empty_element_or_carries_a_trace_index(treebank):
    _, by_sentence, points = treebank
    for tree in by_sentence.values():
        for match in find_matches(tree, points):
            for text in (match.answer.text, match.anchor.text):
                assert text and "*" not in text and "-NONE-" not in text
            assert not any(ch.isdigit() for ch in match.category.split("-", 1)[-1])


def test_traces_leave_no_question_behind(treebank):
    _, by_sentence, points = treebank
    # "Desks are cleared by John": the object of "cleared" is a trace, so there is no direct
    # object; the agent's PP attaches to the verb
    found = {
        (m.point, m.answer.text)
        for m in find_matches(by_sentence["Desks are cleared by John."], points)
    }
    assert found == {("GS", "Desks"), ("MVP", "are cleared"), ("PPA", "cleared")}


def test_wrong_answers_are_phrases_of_the_sentence_and_never_right(treebank):
    _, by_sentence, points = treebank
    tree = by_sentence["I hide the book on my shelf."]
    found = find_matches(tree, points)
    for match, (wrong, same, unique) in zip(
        found, wrong_answers(found, candidates(tree)), strict=True
    ):
        assert match.answer.text not in wrong and unique
        assert all(w in tree.sentence for w in wrong)
        if match.point == "PPA":  # the other attachment site is among the wrong answers
            assert "the book" in wrong and same == 0  # no other verb to offer


def test_two_questions_alike_in_one_sentence_are_not_fill_in_the_blank(treebank):
    _, by_sentence, points = treebank
    tree = by_sentence["Either you apologize or you leave."]
    found = find_matches(tree, points)
    unique = {
        (m.point, m.answer.text): u
        for m, (_, _, u) in zip(found, wrong_answers(found, candidates(tree)), strict=True)
    }
    # "the main verb phrase of “you”" has two right answers
    assert unique[("MVP", "apologize")] is False and unique[("MVP", "leave")] is False
    assert unique[("GS", "you")] is True
