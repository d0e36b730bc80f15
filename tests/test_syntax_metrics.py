"""The paper's metrics against values worked out by hand, and reading answers from replies."""

from __future__ import annotations

import pytest

from gramagents.recipes.syntax import tasks  # noqa: F401 - registers the syntax chain
from gramagents.recipes.syntax.metrics import fitb_scores, mean_std, overall, words
from gramagents.scoring.extract import extract
from gramagents.scoring.overlap import lcs_length


def test_tokens_are_nltk_words_without_punctuation_and_case():
    # NLTK's word tokenizer splits "don't" and the comma; punctuation and quotes go
    assert words('"I don\'t know," he said.') == ("i", "do", "n't", "know", "he", "said")
    assert words("Pierre Vinken, 61 years old") == ("pierre", "vinken", "61", "years", "old")
    assert words("...") == ()


def test_tokenizing_needs_no_downloaded_data(monkeypatch):
    import nltk

    def refuse(*args, **kwargs):
        raise LookupError("no data may be loaded")

    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    words.cache_clear()
    assert words("the board's chairman") == ("the", "board", "'s", "chairman")


@pytest.mark.parametrize(
    ("predicted", "gold", "acc", "f1"),
    [
        # exact, up to case and punctuation
        ("The board.", "the board", 1.0, 1.0),
        # "board the": the common subsequence in order is one word: P = R = 1/2
        ("board the", "the board", 0.0, 0.5),
        # a bag-of-words F1 would give 1.0 here; in order only "a" ... "director" align:
        # gold "a nonexecutive director", predicted "director a nonexecutive":
        # LCS = "a nonexecutive" (2), P = 2/3, R = 2/3, F1 = 2/3
        ("director a nonexecutive", "a nonexecutive director", 0.0, 2 / 3),
        # one word more: P = 3/4, R = 1, F1 = 2 * 3/4 / (7/4) = 6/7
        ("a nonexecutive director Nov.", "a nonexecutive director", 0.0, 6 / 7),
        # one word of three: P = 1, R = 1/3, F1 = 1/2
        ("director", "a nonexecutive director", 0.0, 0.5),
        ("the cat", "the board", 0.0, 0.5),
        ("", "the board", 0.0, 0.0),
        (None, "the board", 0.0, 0.0),
    ],
)
def test_fitb_accuracy_and_order_aware_f1(predicted, gold, acc, f1):
    assert fitb_scores(predicted, gold) == {"acc": acc, "f1": pytest.approx(f1)}


def test_longest_common_subsequence():
    assert lcs_length("a b c d".split(), "b d a".split()) == 2
    assert lcs_length([], ["a"]) == 0


def test_overall_accuracy_is_the_papers_equation_1():
    # the paper's Table 6, Random: zero-shot 50.11, 24.03, 0.42 / 22.20 -> OA 28.48 and
    # few-shot 49.42, 24.62, 0.68 / 23.21 -> 28.66
    assert overall(0.5011, 0.2403, 0.0042, 0.2220) == pytest.approx(0.2848, abs=1e-4)
    assert overall(0.4942, 0.2462, 0.0068, 0.2321) == pytest.approx(0.2866, abs=1e-4)
    # GPT4 zero-shot: 81.88, 88.19, 63.98, 77.78 -> 80.32
    assert overall(0.8188, 0.8819, 0.6398, 0.7778) == pytest.approx(0.8032, abs=1e-4)
    # by hand: (0.6 + 0.3 + (0.2 + 0.4) / 2) / 3 = 1.2 / 3
    assert overall(0.6, 0.3, 0.2, 0.4) == pytest.approx(0.4)


def test_mean_and_standard_deviation_over_seeds():
    mean, std = mean_std([0.5, 0.6, 0.7])
    assert mean == pytest.approx(0.6) and std == pytest.approx(0.1)  # sample std
    assert mean_std([0.5]) == (0.5, None)
    assert mean_std([]) == (None, None)


@pytest.mark.parametrize(
    ("reply", "value", "rule"),
    [
        ("the board", "the board", "first-line"),  # a base model after `The answer is “`
        ("the board”\nSentence: ...", "the board", "continuation"),
        ("The answer is “the board”.", "the board", "labelled"),
        ("The answer is “the board", "the board", "labelled"),  # cut at the stop string
        ("Answer: the board.", "the board", "labelled"),
        ("The subject of the sentence is “She", "She", "quoted"),
        ("  \n“the board”\n", "the board", "quoted"),
        ("  \nthe board\nmore", "the board", "first-line"),
        ("", None, "invalid"),
        ("“”", None, "invalid"),
    ],
)
def test_fill_in_the_blank_answers_are_read_by_a_named_chain(reply, value, rule):
    extraction = extract("syntax-phrase", reply)
    assert (extraction.value, extraction.rule) == (value, rule)


@pytest.mark.parametrize(
    ("reply", "value"),
    [("True”", "T"), ("False", "F"), ("The answer is “False", "F"), ("True. The subject", "T")],
)
def test_true_false_replies_of_base_and_chat_models(reply, value):
    assert extract("tf", reply).value == value


@pytest.mark.parametrize(
    ("reply", "value"), [("B”", "B"), ("The answer is “C", "C"), ("D. He", "D")]
)
def test_option_letters_of_base_and_chat_models(reply, value):
    options = {"options": [{"key": k, "text": t} for k, t in zip("ABCD", "w x y z", strict=False)]}
    assert extract("letter", reply, options).value == value
