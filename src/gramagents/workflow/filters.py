"""Filters any item bank can use: near-duplicate removal, seeded sampling, label cross-checks.

- `minhash-dedup`: MinHash LSH over character 3-grams (works for Chinese as for English):
  the first of each group of near-duplicates is kept (EduEval, Appendix C.1.4: 0.85).
- `sample`: at most `n` records per group, drawn with the build's seed.
- `label-check`: a logistic regression on sentence embeddings, trained with cross-validation
  on the records' own labels (e.g. their level), flags records whose predicted label differs.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .nodes import BuildView, FilterSpec, NodeEnv, NodeUpdate, filter_node, texts


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid")


def shingles(text: str, size: int = 3) -> set[str]:
    """Character n-grams of `text` with whitespace removed."""
    compact = "".join(text.split())
    if len(compact) <= size:
        return {compact}
    return {compact[k : k + size] for k in range(len(compact) - size + 1)}


def _signature(text: str, num_perm: int) -> Any:
    from datasketch import MinHash

    signature = MinHash(num_perm=num_perm, seed=1)
    for gram in shingles(text):
        signature.update(gram.encode("utf-8"))
    return signature


def near_duplicates(
    keys: list[str], groups: list[str], threshold: float = 0.85, num_perm: int = 128
) -> dict[int, tuple[int, float]]:
    """Position of each near-duplicate to (position of the first it repeats, estimated Jaccard).

    Only texts of the same group are compared; the first of each group of near-duplicates is
    the one kept.
    """
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    signatures: dict[str, tuple[Any, int]] = {}
    repeats: dict[int, tuple[int, float]] = {}
    for index, (key, group) in enumerate(zip(keys, groups, strict=True)):
        signature = _signature(key, num_perm)
        twins = [k for k in lsh.query(signature) if groups[signatures[k][1]] == group]
        if twins:
            first = min(twins, key=lambda k: signatures[k][1])
            similarity = signature.jaccard(signatures[first][0])
            repeats[index] = (signatures[first][1], round(similarity, 3))
            continue
        signatures[str(index)] = (signature, index)
        lsh.insert(str(index), signature)
    return repeats


class DedupOptions(_Options):
    """Options of `minhash-dedup`."""

    threshold: float = Field(default=0.85, gt=0, le=1)
    num_perm: int = Field(default=128, ge=16)
    fields: list[str] = Field(default_factory=lambda: ["text"])
    """The record fields compared, joined (a mapping as `keyvalue` pairs)."""
    group_by: str | None = None
    """Compare only records with the same value of this field (e.g. the item shape)."""
    record: str | None = None
    """Compare only records of this type (its class name, e.g. `Instance`); others stay."""


async def dedup(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Remove near-duplicates; each removal is recorded with the record it repeats."""
    records = [
        r
        for r in view.records.values()
        if options.record is None or type(r).__name__ == options.record
    ]
    keys = texts(records, options.fields)
    groups = [str(getattr(r, options.group_by, "")) if options.group_by else "" for r in records]
    repeats = near_duplicates(keys, groups, options.threshold, options.num_perm)
    update = NodeUpdate(
        counts={
            "before": len(records),
            "kept": len(records) - len(repeats),
            "removed": len(repeats),
        }
    )
    for index, (first, similarity) in repeats.items():
        record_id = _record_id(records[index])
        update.removed.append(record_id)
        update.failures.append(
            {
                "id": record_id,
                "duplicates": _record_id(records[first]),
                "jaccard": similarity,
                "reason": "near-duplicate (MinHash LSH)",
            }
        )
    return update


def _record_id(record: BaseModel) -> str:
    return str(record.id)  # type: ignore[attr-defined]


filter_node(
    FilterSpec(
        name="minhash-dedup",
        run=dedup,
        options=DedupOptions,
        description="Remove near-duplicate records (MinHash LSH over character 3-grams).",
    )
)


class SampleOptions(_Options):
    """Options of `sample`."""

    n: int = Field(ge=1)
    """Records kept per group."""
    group_by: str | None = None


async def sample(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """At most `n` records per group, drawn with the build's seed; the rest leave."""
    groups: dict[str, list[str]] = defaultdict(list)
    for key, record in view.records.items():
        groups[str(getattr(record, options.group_by, "")) if options.group_by else ""].append(key)
    rng = random.Random(f"{env.seed}/sample")
    removed: list[str] = []
    for members in groups.values():
        if len(members) > options.n:
            keep = set(rng.sample(members, options.n))
            removed += [m for m in members if m not in keep]
    before = len(view.records)
    return NodeUpdate(
        removed=removed,
        counts={"before": before, "kept": before - len(removed), "removed": len(removed)},
    )


filter_node(
    FilterSpec(
        name="sample",
        run=sample,
        options=SampleOptions,
        description="Keep at most n records per group, drawn with the seed.",
    )
)


def cross_validated_labels(
    texts_by_id: dict[str, str],
    labels_by_id: dict[str, str],
    embed: Callable[[list[str], str], Any],
    model: str = "minilm",
    min_per_label: int = 2,
) -> dict[str, str]:
    """Cross-validated label predictions of a logistic regression on sentence embeddings.

    Labels with fewer than `min_per_label` records are not learnt (their records get no
    prediction); fewer than two learnable labels give no predictions at all.
    """
    counts = Counter(labels_by_id.values())
    learnable = [k for k in texts_by_id if counts[labels_by_id[k]] >= min_per_label]
    if len({labels_by_id[k] for k in learnable}) < 2:
        return {}
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    vectors = embed([texts_by_id[k] for k in learnable], model)
    if not hasattr(vectors, "toarray"):  # sparse rows (tfidf-char) go to the classifier as they are
        vectors = np.asarray(vectors)
    labels = [labels_by_id[k] for k in learnable]
    folds = min(5, min(Counter(labels).values()))
    predicted = cross_val_predict(
        LogisticRegression(max_iter=1000),
        vectors,
        labels,
        cv=StratifiedKFold(folds, shuffle=True, random_state=0),
    )
    return {k: str(p) for k, p in zip(learnable, predicted, strict=True)}


class LabelCheckOptions(_Options):
    """Options of `label-check`."""

    label: str
    """The record field holding the label (e.g. `level`)."""
    fields: list[str] = Field(default_factory=lambda: ["text"])
    """The record fields the classifier reads."""
    embedding_model: str = "minilm"
    min_per_label: int = Field(default=2, ge=2)


async def label_check(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Flag records whose cross-validated predicted label differs from their own."""
    records = list(view.records.values())
    ids = [_record_id(r) for r in records]
    predicted = cross_validated_labels(
        dict(zip(ids, texts(records, options.fields), strict=True)),
        {i: str(getattr(r, options.label, "")) for i, r in zip(ids, records, strict=True)},
        env.embed,
        options.embedding_model,
        options.min_per_label,
    )
    update = NodeUpdate()
    for key, record in zip(ids, records, strict=True):
        own = str(getattr(record, options.label, ""))
        if key in predicted and predicted[key] != own:
            update.flags[key] = [f"{options.label}: {own}, classifier {predicted[key]}"]
    flagged = len(update.flags)
    update.counts = {"checked": len(records), "agree": len(records) - flagged, "flagged": flagged}
    return update


filter_node(
    FilterSpec(
        name="label-check",
        run=label_check,
        options=LabelCheckOptions,
        description="Flag records whose label a classifier on embeddings predicts otherwise.",
    )
)
