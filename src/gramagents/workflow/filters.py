"""Filters any item bank can use: near-duplicate removal, seeded sampling, label cross-checks.

- `minhash-dedup`: MinHash LSH over character 3-grams (works for Chinese as for English)
  proposes candidates; a pair counts when the exact Jaccard of its shingles reaches the
  threshold (EduEval, Appendix C.1.4: 0.85), its `same` fields are equal and, with
  `question`, its last sentences are as alike. The first of each group is kept.
- `sample`: at most `n` records per group, drawn with the build's seed.
- `label-check`: a logistic regression on sentence embeddings, trained with cross-validation
  on the records' own labels (e.g. their level), flags records whose predicted label differs.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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


def _signatures(grams: list[set[str]], num_perm: int) -> list[Any]:
    """MinHash signatures of shingle sets (one set of permutations, drawn once, for all).

    Shingles are hashed with CRC-32 (zlib's, in C), a stable 32-bit hash several times faster
    than datasketch's default SHA-1; the permutations on top of it make the MinHash values.
    """
    from datasketch import MinHash

    encoded = [[g.encode("utf-8") for g in gram] for gram in grams]
    return list(MinHash.bulk(encoded, num_perm=num_perm, seed=1, hashfunc=zlib.crc32))


def jaccard(a: set[str], b: set[str]) -> float:
    """Jaccard similarity of two sets (1 for two empty sets)."""
    return len(a & b) / len(a | b) if a or b else 1.0


_SENTENCE_END = re.compile(r"(?<=[。？！?!；;\n])")
_WORDY = re.compile(r"\w")


def last_sentence(text: str, least: int = 4) -> str:
    """The text's last sentence with at least `least` letters or digits (the whole text if none).

    In an exam item the question comes after its passage: two questions on one passage share
    almost all their text and differ here.
    """
    for part in reversed(_SENTENCE_END.split(text)):
        if len(_WORDY.findall(part)) >= least:
            return part.strip()
    return text.strip()


@dataclass
class DedupKeys:
    """What the dedup compares of each record, position by position."""

    texts: list[str]
    """The compared fields joined (MinHash candidates, then their exact Jaccard)."""
    groups: list[str]
    """Records are compared only within a group."""
    same: list[str] = field(default_factory=list)
    """Canonical JSON of fields that must be equal (empty: no such fields)."""
    tails: list[str] = field(default_factory=list)
    """The question sentence whose own similarity must also reach the threshold (empty: none)."""


def near_duplicates(
    keys: list[str] | DedupKeys,
    groups: list[str] | None = None,
    threshold: float = 0.85,
    num_perm: int = 128,
) -> dict[int, tuple[int, float]]:
    """Position of each near-duplicate to (position of the first it repeats, its Jaccard).

    MinHash LSH proposes candidates among the earlier records of the same group; a candidate
    counts only when the exact Jaccard of the two texts' shingles reaches `threshold`, their
    `same` fields are equal and their `tails` (when given) are as similar. The earliest such
    record is the one kept; a record that repeats none is kept and may be repeated later.
    """
    from datasketch import MinHashLSH

    if not isinstance(keys, DedupKeys):
        keys = DedupKeys(list(keys), list(groups or [""] * len(keys)))
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    grams = [shingles(text) for text in keys.texts]
    repeats: dict[int, tuple[int, float]] = {}
    for index, (gram, signature) in enumerate(
        zip(grams, _signatures(grams, num_perm), strict=True)
    ):
        candidates = sorted(int(k) for k in lsh.query(signature))
        match = next(
            (
                (first, similarity)
                for first in candidates
                if _matches(keys, first, index)
                and (similarity := jaccard(gram, grams[first])) >= threshold
                and _tails_alike(keys, first, index, threshold)
            ),
            None,
        )
        if match is not None:
            repeats[index] = (match[0], round(match[1], 3))
            continue
        lsh.insert(str(index), signature)
    return repeats


def _matches(keys: DedupKeys, first: int, index: int) -> bool:
    if keys.groups[first] != keys.groups[index]:
        return False
    return not keys.same or keys.same[first] == keys.same[index]


def _tails_alike(keys: DedupKeys, first: int, index: int, threshold: float) -> bool:
    if not keys.tails:
        return True
    return jaccard(shingles(keys.tails[first]), shingles(keys.tails[index])) >= threshold


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
    same: list[str] = Field(default_factory=list)
    """Fields that must be equal for two records to be duplicates (e.g. the gold answer and
    the options: two items with different answers are different questions, however alike)."""
    question: str | None = None
    """A field whose last sentence must be as similar as the whole (`last_sentence`): two
    different questions on a shared passage are never taken for duplicates."""


def dedup_keys(records: list[BaseModel], options: DedupOptions) -> DedupKeys:
    """The texts, groups, equal fields and question sentences of `records`."""
    groups = [str(getattr(r, options.group_by, "")) if options.group_by else "" for r in records]
    same = (
        [
            json.dumps([getattr(r, f, None) for f in options.same], sort_keys=True, default=str)
            for r in records
        ]
        if options.same
        else []
    )
    tails = (
        [last_sentence(str(getattr(r, options.question, "") or "")) for r in records]
        if options.question
        else []
    )
    return DedupKeys(texts(records, options.fields), groups, same, tails)


async def dedup(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Remove near-duplicates; each removal is recorded with the record it repeats."""
    records = [
        r
        for r in view.records.values()
        if options.record is None or type(r).__name__ == options.record
    ]
    repeats = near_duplicates(
        dedup_keys(records, options), None, options.threshold, options.num_perm
    )
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
                "threshold": options.threshold,
                **{f"same_{f}": getattr(records[index], f, None) for f in options.same},
                "reason": "near-duplicate (MinHash LSH candidate, exact Jaccard checked)",
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


class Prediction(NamedTuple):
    """A classifier's cross-validated label for a record, and its probability."""

    label: str
    confidence: float


def _classifier(sparse: bool) -> Any:
    from sklearn.linear_model import LogisticRegression

    if sparse:
        # SAGA's cost grows with the non-zero entries, not the (many) columns: on the EduEval
        # release it gives lbfgs's labels for 99.9 % of the items in a tenth of the time.
        return LogisticRegression(solver="saga", tol=1e-3, max_iter=200, random_state=0)
    return LogisticRegression(max_iter=1000)


def _frequent_columns(matrix: Any, min_df: int) -> Any:
    """The columns of a sparse matrix non-zero in at least `min_df` rows (rare n-grams out)."""
    import numpy as np

    if min_df <= 1:
        return matrix
    seen = np.asarray((matrix > 0).sum(axis=0)).ravel() >= min_df
    return matrix[:, seen] if seen.any() else matrix


def cross_validated_labels(
    texts_by_id: dict[str, str],
    labels_by_id: dict[str, str],
    embed: Callable[[list[str], str], Any],
    model: str = "minilm",
    min_per_label: int = 2,
    min_df: int = 1,
) -> dict[str, Prediction]:
    """Cross-validated label predictions of a logistic regression on text vectors.

    Each record's label is predicted by a model that never saw it (5 folds, stratified), with
    the probability the model gives it. Labels with fewer than `min_per_label` records are not
    learnt (their records get no prediction); fewer than two learnable labels give no
    predictions at all. Sparse vectors (`tfidf-char`) keep the columns non-zero in `min_df`
    records or more, which bounds the classifier's cost.
    """
    counts = Counter(labels_by_id.values())
    learnable = [k for k in texts_by_id if counts[labels_by_id[k]] >= min_per_label]
    if len({labels_by_id[k] for k in learnable}) < 2:
        return {}
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    vectors = embed([texts_by_id[k] for k in learnable], model)
    sparse = hasattr(vectors, "toarray")
    vectors = _frequent_columns(vectors, min_df) if sparse else np.asarray(vectors)
    labels = [labels_by_id[k] for k in learnable]
    folds = min(5, min(Counter(labels).values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        probabilities = cross_val_predict(
            _classifier(sparse),
            vectors,
            labels,
            cv=StratifiedKFold(folds, shuffle=True, random_state=0),
            method="predict_proba",
        )
    classes = sorted(set(labels))
    return {
        k: Prediction(classes[int(row.argmax())], float(row.max()))
        for k, row in zip(learnable, probabilities, strict=True)
    }


class LabelCheckOptions(_Options):
    """Options of `label-check`."""

    label: str
    """The record field holding the label (e.g. `level`)."""
    fields: list[str] = Field(default_factory=lambda: ["text"])
    """The record fields the classifier reads."""
    embedding_model: str = "minilm"
    min_per_label: int = Field(default=2, ge=2)
    min_confidence: float = Field(default=0.0, ge=0, le=1)
    """Flag only records whose other label the classifier gives at least this probability."""


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
        found = predicted.get(key)
        if found and found.label != own and found.confidence >= options.min_confidence:
            update.flags[key] = [
                f"{options.label}: {own}, classifier {found.label} (p={found.confidence:.2f})"
            ]
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
