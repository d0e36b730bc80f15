"""Grammatical error correction: reading a correction, and M2 counts against the references.

A correction is the reply's first line that does not repeat the prompt's instruction; the
student's text returned unchanged is a correction (of nothing), the whole prompt echoed is not
(`scoring/echo.py`). Each correction is tokenized and compared with its tokenized source by
ERRANT; its edits are counted against every reference annotator of the item (annotator 0 is
the Step 2 reference that uses the grammar item, annotators 1+ the Step 3 alternatives). The
task's aggregation (tasks/gec) then picks, sentence by sentence, the reference
`errant_compare` would pick.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...api import Extraction, ItemScore, Meta, chain, metric, nfkc
from .m2 import Counts, M2Edit, by_annotator, compare, prf

_LABEL = re.compile(
    r"^(?:(?:the\s+)?correct(?:ed)?(?:\s+(?:text|sentence|version))?"
    r"(?:\s+(?:is|would be|should be))?|correction|answer|output|修改|改正(?:后)?)\s*[:：]\s*",
    re.IGNORECASE,
)
"""A label before the correction on its line: `Corrected: …`, "The correct sentence would be:
…" (as the embedded model writes it), `改正后：…`."""
_WRAPPING = " \t\"'“”‘’`*"


def _first_line(text: str, meta: Meta) -> str | None:
    for line in text.strip().splitlines():
        cleaned = _LABEL.sub("", line.strip()).strip(_WRAPPING)
        if cleaned:
            return cleaned
    return None


chain("correction", [("first-line", _first_line)], answer="text", own_text=("text",))


def reference_edits(meta: Mapping[str, Any]) -> list[M2Edit]:
    """The item's reference edits (from its metadata)."""
    return [
        M2Edit(edit[0], edit[1], edit[2], edit[3], reference["annotator"])
        for reference in meta["references"]
        for edit in reference["edits"]
    ]


@metric("m2")
def m2_counts(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """Edits of the correction, counted against each reference annotator."""
    from .annotate import edits

    source = nfkc(meta["m2_source"])  # compared in the form the correction was read in
    corrected = source if extraction.invalid else str(extraction.value)
    hypothesis = edits(source, corrected, 0)
    hyp = by_annotator(hypothesis)[0]
    per_reference = {}
    for annotator, ref in by_annotator(reference_edits(meta)).items():
        counts = compare(hyp, ref)
        per_reference[str(annotator)] = [counts.tp, counts.fp, counts.fn]
    best = max(per_reference.values(), key=lambda c: (prf(_c(c))[2], c[0], -c[1], -c[2]))
    p, r, f = prf(_c(best))
    return ItemScore(
        {"f0.5": f, "p": p, "r": r},
        {
            "hypothesis": [[e.start, e.end, e.category, e.correction] for e in hypothesis],
            "per_reference": per_reference,
            "steps": {str(ref["annotator"]): ref["step"] for ref in meta["references"]},
        },
    )


def _c(counts: list[int]) -> Counts:
    return Counts(*counts)
