"""Recipe parameters of the CPG banks (CPG-EVAL §3.3)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

NegativeSource = Literal["group-pairs", "same-category", "similar", "other-category", "any"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class BankParams(_Params):
    """Options of the CPG bank builder itself."""

    sentences: Literal["prefer-rewritten", "rewritten-only", "source"] = "prefer-rewritten"
    """Which sentence stands for each source example: the accepted agent rewrite when there is
    one (else the source sentence), only accepted rewrites, or always the source sentence."""
    embedding_model: str = "tfidf-char"
    """Similarity of points for SIM-GRA and `similar` negatives: `tfidf-char` (character n-gram
    TF-IDF, which reads Chinese; its SIM-GRA distractors agree with the released bank's about
    twice as often as MiniLM's), `minilm` (the packaged all-MiniLM-L6-v2, English only: most
    Chinese characters are unknown to its tokenizer), or any sentence-transformers model (a
    local folder or a hub id)."""
    skip_literal_matches: bool = False
    """Never ask a sentence as a negative of a point whose form (a short Chinese name such as
    会 or 上、下) appears in it: such a sentence may contain the point. The released banks ask
    them (方位名词：上边… against 上、下…, 会议 against 会); on the release's own table this
    leaves out 110 of SINGLE-F's 11,968 questions and 115 of BATCH-F's."""


class SingleTParams(_Params):
    """SINGLE-T: each sentence with its own point; no parameters."""


class SingleFParams(_Params):
    """SINGLE-F: each sentence with points it does not contain."""

    negatives_per_sentence: int = Field(default=1, ge=1)
    """How many points each sentence is asked against (not with `group-pairs`)."""
    negatives_from: NegativeSource = "group-pairs"
    """Where the points come from. `group-pairs`, as the released bank: every point is asked
    against the first sentence of each other point of its group (Σ n(n−1) questions);
    `same-category`: each sentence against other points of its category; `similar` ranks all
    points by similarity; `other-category` and `any` draw at random."""


class BatchTParams(_Params):
    """BATCH-T: one point with its sentences, all of which contain it."""

    size: int = Field(default=9, ge=2)
    """Sentences per question (the paper's 9; fewer when a point has fewer)."""


class BatchFParams(_Params):
    """BATCH-F: sentences of other points, none of which contains the asked point."""

    size: int = Field(default=9, ge=2)
    questions_per_point: int = Field(default=1, ge=1)
    """Questions per point (not with `group-pairs`)."""
    negatives_from: NegativeSource = "group-pairs"
    """`group-pairs`, as the released bank: every point against the sentences of each other
    point of its group, one question per pair; `similar`: sentences of the most similar points
    first, so that the task is hard."""


class SimGraParams(_Params):
    """SIM-GRA: the sentence's own point among its most similar points."""

    options: int = Field(default=5, ge=2)
    """Options per question: the right point and the `options - 1` most similar others."""


class CatGraParams(_Params):
    """CAT-GRA: the sentence's own point among every point of its category, by code."""

    min_points: int = Field(default=2, ge=2)
    """Categories with fewer points make no question (a group the table names is asked
    whatever its size)."""


class ConInsF10Params(_Params):
    """CON-INS-F10: confusing instances only."""

    size: int = Field(default=10, ge=2)
    """Confusing instances per question: the point's first ones, in table order."""
    min_size: int = Field(default=5, ge=2)
    """Points with fewer confusing instances make no question; those with fewer than `size`
    are asked with all they have."""

    @model_validator(mode="after")
    def _min_within_size(self) -> ConInsF10Params:
        if self.min_size > self.size:
            raise ValueError(f"min_size ({self.min_size}) must not exceed size ({self.size})")
        return self


class ConInsT5F5Params(_Params):
    """CON-INS-T5F5: examples and confusing instances, shuffled."""

    examples: int = Field(default=5, ge=1)
    """Sentences that contain the point (answer T); points with fewer make no question."""
    confusers: int = Field(default=5, ge=1)
    """Confusing instances (answer F); points with fewer make no question."""


TASK_PARAMS: dict[str, type[BaseModel]] = {
    "SINGLE-T": SingleTParams,
    "SINGLE-F": SingleFParams,
    "BATCH-T": BatchTParams,
    "BATCH-F": BatchFParams,
    "SIM-GRA": SimGraParams,
    "CAT-GRA": CatGraParams,
    "CON-INS-F10": ConInsF10Params,
    "CON-INS-T5F5": ConInsT5F5Params,
}
