"""Character n-gram TF-IDF vectors: the similarity that reads Chinese grammar-point labels."""

from __future__ import annotations

from gramagents.runtime.cache import NullCache
from gramagents.runtime.embeddings import CHAR_TFIDF, Embedder, dense


def test_char_tfidf_ranks_points_sharing_characters_first() -> None:
    texts = ["方式副词：尽量", "介词：在", "方式副词：尽快", "结构助词：的"]
    vectors = Embedder(NullCache()).embed(texts, CHAR_TFIDF)
    similarity = dense(vectors @ vectors.T)
    assert similarity.shape == (4, 4)
    assert abs(similarity[0, 0] - 1.0) < 1e-6  # unit rows
    ranked = sorted(range(1, 4), key=lambda j: -similarity[0, j])
    assert ranked[0] == 2  # 尽快 shares 方式副词 and 尽 with 尽量


def test_char_tfidf_gives_empty_texts_zero_similarity() -> None:
    vectors = Embedder(NullCache()).embed(["", "介词：在"], CHAR_TFIDF)
    similarity = dense(vectors @ vectors.T)
    assert similarity[0, 1] == 0.0
