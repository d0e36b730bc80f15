"""The distractor check of the grammar-book banks on a handful of sentences written for the test."""

from __future__ import annotations

import random

from gramagents.recipes.grammar_book.distractors import Owners
from gramagents.recipes.grammar_book.records import PointCheck
from gramagents.records import Instance

SENTENCES = [
    Instance(id="s1", point_id="article", text="Den Hond schléift."),
    Instance(id="s2", point_id="v2", text="den hond schléift"),  # the same sentence
    Instance(id="s3", point_id="plural", text="Muer ginn d'Kanner an d'Schoul."),
]
PAIRS = [
    Instance(id="s1/twin", point_id="article", text="Dem Hond schléift.", kind="pair"),
    Instance(id="s3/twin", point_id="plural", text="Den Hond schléift!", kind="pair"),
]
CHECKS = [
    PointCheck(id="s3|v2", sentence_id="s3", point_id="v2", applies=True),
    PointCheck(id="s3|article", sentence_id="s3", point_id="article", applies=False),
    PointCheck(id="s1/twin|article", sentence_id="s1/twin", point_id="article", kind="twin",
               applies=True),
]  # fmt: skip


def test_a_point_owns_its_sentence_a_shared_sentence_and_what_the_back_checker_says():
    owners = Owners(SENTENCES, PAIRS, CHECKS)
    s1, _, s3 = SENTENCES
    assert owners.owns("v2", s1)  # it has the same sentence
    assert owners.owns("v2", s3)  # the back-checker says verb second applies
    assert not owners.owns("article", s3)  # it says the article point does not
    assert not owners.owns("plural", s1)


def test_a_drawn_point_that_owns_the_sentence_is_dropped_and_replaced():
    owners = Owners(SENTENCES, PAIRS, CHECKS)
    s1 = SENTENCES[0]
    pool = ["case", "plural", "v2"]
    seed = next(s for s in range(100) if "v2" in random.Random(s).sample(pool, 2))
    drawn = owners.draw(random.Random(seed), pool, 2, lambda p: owners.owns(p, s1))
    assert sorted(drawn) == ["case", "plural"]
    assert owners.counts["distractors_dropped"] == owners.counts["distractors_replaced"] == 1
    # nothing to replace it with: the item is left out
    assert owners.draw(random.Random(seed), ["case", "v2"], 2, lambda p: owners.owns(p, s1)) is None
    assert owners.counts["items_left_out"] == 1


def test_nothing_bad_draws_as_a_plain_sample():
    owners = Owners(SENTENCES, PAIRS, CHECKS)
    pool = ["a", "b", "c", "d"]
    assert owners.draw(random.Random(3), pool, 2, lambda p: False) == random.Random(3).sample(
        pool, 2
    )
    assert owners.counts["distractors_dropped"] == 0


def test_a_twin_that_is_right_after_all_leaves_task_4():
    owners = Owners(SENTENCES, PAIRS, CHECKS)
    # s1's twin was judged grammatical; s3's twin is an accepted sentence (punctuation aside)
    assert owners.usable_pairs(PAIRS) == []
    assert owners.counts["pairs_dropped"] == 2
    assert Owners(SENTENCES, PAIRS[:1], []).usable_pairs(PAIRS[:1]) == PAIRS[:1]
