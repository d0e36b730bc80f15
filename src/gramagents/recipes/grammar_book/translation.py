"""Translation metrics with sacrebleu (paper §3.4): spBLEU, BLEU and chrF++.

- chrF++ is sacrebleu's chrF with word bigrams (`CHRF(word_order=2)`, `--chrf-word-order 2`).
- spBLEU is BLEU over the FLORES-200 SentencePiece segmentation (`BLEU(tokenize="flores200")`,
  `-tok flores200`). sacrebleu does not ship that SentencePiece model: it downloads it on first
  use into `$SACREBLEU/models/` (by default `~/.sacrebleu/models/flores200sacrebleuspm`). With
  no network it can only be used when the file is already there, so spBLEU is computed when
  the file (and the `sentencepiece` package) is present and reported as unavailable, with the
  reason, otherwise; BLEU (13a) and chrF++ need nothing and are always computed.

Corpus scores are what `sacrebleu REF -i HYP -m bleu chrf --chrf-word-order 2` prints;
sentence scores (BLEU with effective order) give the per-sentence mean and standard deviation
the paper's Table 3 reports.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from statistics import mean, pstdev
from typing import Any

from ...api import require

SPM_FILE = "flores200sacrebleuspm"


def spm_model_path() -> Path:
    """Where sacrebleu looks for the FLORES-200 SentencePiece model."""
    require("grammar-book", "grammar-book")
    from sacrebleu.tokenizers import tokenizer_spm

    return Path(tokenizer_spm.SACREBLEU_DIR) / "models" / SPM_FILE


def spbleu_status() -> tuple[bool, str]:
    """Whether spBLEU can be computed here, and if not, why."""
    if importlib.util.find_spec("sentencepiece") is None:
        return False, "the sentencepiece package is not installed (pip install sentencepiece)"
    path = spm_model_path()
    if not path.is_file():
        return False, (
            f"the FLORES-200 SentencePiece model is not at {path}: sacrebleu downloads it on "
            "first use, which needs a network; copy the file there (or set SACREBLEU to a "
            "folder holding models/flores200sacrebleuspm) to compute spBLEU offline"
        )
    return True, f"FLORES-200 SentencePiece model at {path}"


@lru_cache(maxsize=8)
def _metric(name: str, sentence: bool = False) -> Any:
    require("grammar-book", "grammar-book")
    from sacrebleu.metrics import BLEU, CHRF

    if name == "chrf++":
        return CHRF(word_order=2)
    if name == "spbleu":
        return BLEU(tokenize="flores200", effective_order=sentence)
    return BLEU(effective_order=sentence)


def _metrics() -> list[str]:
    return ["spbleu", "bleu", "chrf++"] if spbleu_status()[0] else ["bleu", "chrf++"]


def sentence_scores(hypothesis: str, reference: str) -> dict[str, float]:
    """Sentence-level scores of one translation."""
    return {
        name: round(_metric(name, sentence=True).sentence_score(hypothesis, [reference]).score, 4)
        for name in _metrics()
    }


def corpus_scores(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """Corpus-level scores, as sacrebleu's command line prints them."""
    return {name: _metric(name).corpus_score(hypotheses, [references]).score for name in _metrics()}


def signatures() -> dict[str, str]:
    """The signature sacrebleu gives each metric (what was computed, and how)."""
    return {name: str(_metric(name).get_signature()) for name in _metrics()}


def spread(values: list[float]) -> dict[str, float]:
    """Mean and (population) standard deviation of sentence scores."""
    return {"mean": mean(values), "std": pstdev(values)} if values else {"mean": 0.0, "std": 0.0}
