"""Prefix-tree packing for log-likelihood: layout, mask, and the scores it gives."""

import asyncio
import random

import pytest

from gramagents.models.prefix_tree import batch_rows, pack_trees, tree_mask


def _sequences(count: int, seed: int = 3) -> list[list[int]]:
    rng = random.Random(seed)
    starts = [[1, 5, 9], [1, 5, 7, 7], [1, 8]]
    return [
        rng.choice(starts) + [rng.randrange(10, 20) for _ in range(rng.randrange(0, 6))]
        for _ in range(count)
    ]


def test_every_sequence_reads_back_from_its_row_and_shared_prefixes_are_stored_once():
    sequences = _sequences(200)
    packing = pack_trees(sequences, row_tokens=40)
    for sequence, (row_index, path) in zip(sequences, packing.where, strict=True):
        row = packing.rows[row_index]
        assert [row.tokens[p] for p in path] == sequence
        assert [row.depths[p] for p in path] == list(range(len(sequence)))
        assert [row.parents[p] for p in path] == [-1, *path[:-1]]
    for row in packing.rows:
        assert len(row.tokens) <= row.capacity
        # A node is unique by (parent, token): nothing is stored twice in a row.
        assert len(set(zip(row.parents, row.tokens, strict=True))) == len(row.tokens)
    assert packing.tokens < sum(map(len, sequences)) / 2


def test_a_long_sequence_gets_a_row_of_its_own_size_and_its_continuations_join_it():
    prompt = list(range(100, 400))
    sequences = [prompt + [7], prompt + [8, 9], [1, 2]]
    packing = pack_trees(sequences, row_tokens=16)
    first, second = packing.where[0][0], packing.where[1][0]
    assert first == second
    assert len(packing.rows[first].tokens) == len(prompt) + 3


def test_the_mask_lets_a_token_see_itself_and_its_ancestors_only():
    packing = pack_trees([[1, 2, 3], [1, 2, 4], [1, 5]], row_tokens=64)
    (row,) = packing.rows
    mask = tree_mask([row], width=len(row.tokens) + 1)[0, 0]
    for i in range(len(row.tokens)):
        ancestors, node = set(), i
        while node >= 0:
            ancestors.add(node)
            node = row.parents[node]
        assert {j for j in range(mask.shape[1]) if mask[i, j]} == ancestors
    assert mask[-1].nonzero().flatten().tolist() == [len(row.tokens)]  # padding: itself


def test_batches_respect_the_token_budget():
    packing = pack_trees(_sequences(300, seed=5), row_tokens=24)
    batches = batch_rows(packing.rows, token_budget=60)
    assert sorted(i for b in batches for i in b) == list(range(len(packing.rows)))
    for batch in batches:
        width = max(len(packing.rows[i].tokens) for i in batch)
        assert len(batch) == 1 or width * len(batch) <= 60


@pytest.mark.slow
@pytest.mark.parametrize("token_budget", [24, 4096])
def test_shared_prefix_scores_equal_separate_rows_on_the_embedded_model(token_budget):
    from gramagents.models import Model, create_backend
    from gramagents.records import LoglikelihoodRequest

    requests = (
        [
            # both conditionings: the sentences after a space share their prefix tree, and
            # do not share one with the same sentences as a text begins
            LoglikelihoodRequest(context="", continuation=text, conditioning=conditioning)
            for text in (
                "These children sing by the window.",
                "These children sings by the window.",
                "The dog sleeps in the kitchen.",
                "The dog sleep in the kitchen.",
                "The dogs sleep in the kitchen.",
            )
            for conditioning in ("spaced", "bare")
        ]
        + [
            LoglikelihoodRequest(context="Which sentence is right? Answer:", continuation=option)
            for option in (" A", " B", " the first one", " the second one")
        ]
        + [
            LoglikelihoodRequest(
                context="选哪一句？答：", continuation=option, conditioning="spaced"
            )
            for option in ("我买了一本书。", "我买了一条书。")
        ]
        + [
            # Enough distinct sentences for several rows, which a large budget puts in one batch.
            LoglikelihoodRequest(context="", continuation=f"Row filler number {n} is {word}.")
            for n, word in enumerate(["red", "blue", "green", "tall", "quiet"] * 6)
        ]
    )
    separate = create_backend("smollm2?dtype=float32&prefix_sharing=false&batch_size=3")
    shared = create_backend(f"smollm2?dtype=float32&token_budget={token_budget}")
    expected = asyncio.run(Model(separate).loglikelihood(requests))
    got = asyncio.run(Model(shared).loglikelihood(requests))
    for want, have in zip(expected, got, strict=True):
        assert have.n_tokens == want.n_tokens
        assert have.logprob == pytest.approx(want.logprob, abs=1e-3)
        assert have.greedy == want.greedy
