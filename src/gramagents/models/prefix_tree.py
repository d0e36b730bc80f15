"""Log-likelihood with shared prefixes computed once.

Minimal pairs differ in a word or two, and choice items repeat one long prompt before each
option, so most scored sequences share their first tokens with another sequence. Here the
sequences of a batch are merged into prefix trees, and a tree is laid out in one row in
depth-first order: each token appears once, attends only to itself and its ancestors (a
4-D attention mask) and sits at its depth (position ids). A causal model gives every
node the same hidden state as in the sequence on its own, so the log-probabilities are those
of separate rows, up to floating-point rounding, for fewer tokens.

`pack_trees` is plain Python (tested without a model); `score_packed` runs the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

ROW_TOKENS = 128
"""Tokens per row to aim for: attention over a row costs its length squared."""


@dataclass
class PackedRow:
    """One row of merged sequences: tokens in depth-first order, each with its parent."""

    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    capacity: int = ROW_TOKENS
    children: list[dict[int, int]] = field(default_factory=list)
    roots: dict[int, int] = field(default_factory=dict)

    def new_nodes(self, sequence: Sequence[int]) -> int:
        """How many tokens of `sequence` this row does not hold yet."""
        node, depth = -1, 0
        for token in sequence:
            nxt = (self.children[node] if node >= 0 else self.roots).get(token)
            if nxt is None:
                break
            node, depth = nxt, depth + 1
        return len(sequence) - depth

    def insert(self, sequence: Sequence[int]) -> list[int]:
        """Add `sequence`; the row positions of its tokens."""
        path: list[int] = []
        node = -1
        for depth, token in enumerate(sequence):
            table = self.children[node] if node >= 0 else self.roots
            nxt = table.get(token)
            if nxt is None:
                nxt = len(self.tokens)
                table[token] = nxt
                self.tokens.append(token)
                self.parents.append(node)
                self.depths.append(depth)
                self.children.append({})
            path.append(nxt)
            node = nxt
        return path


@dataclass
class Packing:
    """Rows, and for each sequence its row and the row positions of its tokens."""

    rows: list[PackedRow]
    where: list[tuple[int, list[int]]]

    @property
    def tokens(self) -> int:
        """Tokens the model will process (padding aside)."""
        return sum(len(r.tokens) for r in self.rows)


def pack_trees(sequences: Sequence[Sequence[int]], row_tokens: int = ROW_TOKENS) -> Packing:
    """Merge sequences into prefix-tree rows of about `row_tokens` tokens.

    Sequences are taken in token order, so those sharing a prefix meet in the same row. A
    row holds at least one sequence, however long; a row started by a long sequence (a long
    prompt) grows to twice its length, so that the options that follow it share it.
    """
    order = sorted(range(len(sequences)), key=lambda i: list(sequences[i]))
    rows: list[PackedRow] = []
    where: list[tuple[int, list[int]]] = [(0, [])] * len(sequences)
    current: PackedRow | None = None
    for index in order:
        sequence = sequences[index]
        if current is not None and (
            len(current.tokens) + current.new_nodes(sequence) > current.capacity
        ):
            current = None
        if current is None:
            current = PackedRow(capacity=max(row_tokens, 2 * len(sequence)))
            rows.append(current)
        where[index] = (len(rows) - 1, current.insert(sequence))
    return Packing(rows=rows, where=where)


def batch_rows(rows: Sequence[PackedRow], token_budget: int) -> list[list[int]]:
    """Group row indices, similar lengths together, at most `token_budget` padded tokens each."""
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i].tokens))
    batches: list[list[int]] = []
    for index in order:
        if batches:
            last = batches[-1]
            width = len(rows[last[0]].tokens)
            if width * (len(last) + 1) <= token_budget:
                last.append(index)
                continue
        batches.append([index])
    return batches


def tree_mask(rows: Sequence[PackedRow], width: int) -> Any:
    """Boolean attention mask (rows, 1, width, width): a token sees itself and its ancestors."""
    import torch

    mask = torch.zeros((len(rows), 1, width, width), dtype=torch.bool)
    for b, row in enumerate(rows):
        grid = mask[b, 0]
        for i, parent in enumerate(row.parents):
            if parent >= 0:
                grid[i] = grid[parent]
            grid[i, i] = True
        for i in range(len(row.tokens), width):
            grid[i, i] = True  # padding sees itself only, so its softmax stays finite
    return mask


def plain_output_head(model: Any) -> Any | None:
    """The output projection when logits are nothing more than it (no scaling, no capping)."""
    config = getattr(model, "config", None)
    for name in ("final_logit_softcapping", "logit_scale", "logits_scaling"):
        value = getattr(config, name, None)
        if value not in (None, 1, 1.0):
            return None
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    base = getattr(model, "base_model", None)
    if head is None or base is None or base is model:
        return None
    return head


@dataclass
class Scored:
    """Per sequence: summed log-probability of its scored tokens, and whether all were argmax."""

    logprob: float
    greedy: bool


_Wanted = dict[int, list[tuple[int, list[int], list[int]]]]
"""Per row: (sequence index, row positions of the nodes that predict its scored tokens, the
scored tokens)."""
_Asked = tuple[int, int, list[int], list[int]]
"""One sequence of a batch: (row in the batch, sequence index, predicting positions, scored
tokens)."""


def score_packed(
    lm: Any,
    sequences: Sequence[Sequence[int]],
    scored: Sequence[int],
    token_budget: int,
    row_tokens: int = ROW_TOKENS,
    stop: Callable[[], bool] | None = None,
) -> list[Scored | None]:
    """Log-probability of the last `scored[i]` tokens of each sequence, prefixes shared.

    `stop` is asked before each forward pass: once it says so, the sequences not scored yet
    come back as None.
    """
    packing = pack_trees(sequences, row_tokens)
    wanted = _wanted(packing, sequences, scored)
    head = plain_output_head(lm.model)
    results: list[Scored | None] = [None] * len(sequences)
    for batch in batch_rows(packing.rows, token_budget):
        if stop is not None and stop():
            return results
        requests: list[_Asked] = [
            (b, index, sources, targets)
            for b, row_index in enumerate(batch)
            for index, sources, targets in wanted.get(row_index, [])
        ]
        node_of = _predicting_nodes(requests)
        if not node_of:
            for _, index, _, _ in requests:
                results[index] = Scored(logprob=0.0, greedy=True)
            continue
        logits = _logits(lm, head, [packing.rows[i] for i in batch], node_of)
        _read_scores(logits, node_of, requests, results)
    return [r if r is not None else Scored(0.0, True) for r in results]


def _wanted(packing: Packing, sequences: Sequence[Sequence[int]], scored: Sequence[int]) -> _Wanted:
    """What each row is asked: the sequences it holds, with their scored tokens."""
    wanted: _Wanted = {}
    for index, (row, path) in enumerate(packing.where):
        count = scored[index]
        sequence = sequences[index]
        if not 0 <= count < len(sequence):
            raise ValueError("a scored sequence needs at least one unscored token before it")
        start = len(sequence) - count
        wanted.setdefault(row, []).append(
            (index, path[start - 1 : len(sequence) - 1], list(sequence[start:]))
        )
    return wanted


def _predicting_nodes(
    requests: list[_Asked],
) -> dict[tuple[int, int], int]:
    """(batch row, position) of every node whose next-token distribution is needed, numbered."""
    node_of: dict[tuple[int, int], int] = {}
    for b, _, sources, _ in requests:
        for position in sources:
            node_of.setdefault((b, position), len(node_of))
    return node_of


def _logits(
    lm: Any, head: Any | None, rows: list[PackedRow], node_of: dict[tuple[int, int], int]
) -> Any:
    """Float logits (nodes, vocabulary) of the nodes in `node_of`, in its numbering.

    With a plain output head, only those nodes' hidden states are projected.
    """
    import torch

    width = max(len(r.tokens) for r in rows)
    pad = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(rows), width), pad, dtype=torch.long)
    positions = torch.zeros((len(rows), width), dtype=torch.long)
    for b, row in enumerate(rows):
        input_ids[b, : len(row.tokens)] = torch.tensor(row.tokens, dtype=torch.long)
        positions[b, : len(row.tokens)] = torch.tensor(row.depths, dtype=torch.long)
    picks_b = torch.tensor([b for b, _ in node_of], dtype=torch.long)
    picks_p = torch.tensor([p for _, p in node_of], dtype=torch.long)
    kwargs = {
        "input_ids": input_ids.to(lm.device),
        "attention_mask": tree_mask(rows, width).to(lm.device),
        "position_ids": positions.to(lm.device),
    }
    with torch.inference_mode():
        if head is not None:
            hidden = lm.model.base_model(**kwargs).last_hidden_state
            return head(hidden[picks_b, picks_p]).float()
        return lm.model(**kwargs).logits[picks_b, picks_p].float()


def _read_scores(
    logits: Any,
    node_of: dict[tuple[int, int], int],
    requests: list[_Asked],
    results: list[Scored | None],
) -> None:
    """Fill `results` for the batch's sequences from their predicting nodes' logits."""
    import torch

    with torch.inference_mode():
        normalizer = torch.logsumexp(logits, dim=-1)
        best = logits.argmax(dim=-1)
        for b, index, sources, targets in requests:
            if not targets:
                results[index] = Scored(logprob=0.0, greedy=True)
                continue
            nodes = torch.tensor([node_of[(b, p)] for p in sources], dtype=torch.long)
            target = torch.tensor(targets, dtype=torch.long, device=logits.device)
            picked = logits[nodes, target] - normalizer[nodes]
            results[index] = Scored(
                logprob=float(picked.sum()),
                greedy=bool((best[nodes] == target).all()),
            )
