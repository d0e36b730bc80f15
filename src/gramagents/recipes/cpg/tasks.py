"""CPG-EVAL (Wang 2025): Chinese pedagogical grammar banks, their tasks and their scoring.

Tasks as §3.3 defines them and as the released scoring reads them: SINGLE by one T/F, BATCH
and CON-INS by the sequence of T/F letters scored per sub-question, SIM-GRA by option letter,
CAT-GRA by the point's code.
"""

from __future__ import annotations

from collections.abc import Callable

from ...api import GenParams, Item, TaskSpec, constant, task

FAMILY = "cpg"


def _one_over_options(item: Item) -> float:
    options = item.meta.get("options") or item.prompt.vars.get("options") or []
    return 1.0 / len(options) if options else float("nan")


def _register(
    name: str,
    extractor: str,
    metric: str,
    max_tokens: int,
    baseline: Callable[[Item], float],
    text: str,
) -> None:
    task(
        TaskSpec(
            name=name,
            family=FAMILY,
            extractor=extractor,
            metric=metric,
            params=GenParams(max_tokens=max_tokens),
            random_baseline=baseline,
            description=text,
        )
    )


_register(
    "SINGLE-T",
    "tf",
    "acc",
    16,
    constant(0.5),
    "A sentence and the grammar point it contains; gold T.",
)
_register(
    "SINGLE-F",
    "tf",
    "acc",
    16,
    constant(0.5),
    "A sentence and a grammar point it does not contain; gold F.",
)
_register(
    "BATCH-T",
    "tf-sequence",
    "sub-acc",
    64,
    constant(0.5),
    "Sentences of one point, each to be judged T; scored per sentence.",
)
_register(
    "BATCH-F",
    "tf-sequence",
    "sub-acc",
    64,
    constant(0.5),
    "Sentences of other points, each to be judged F; scored per sentence.",
)
_register(
    "SIM-GRA",
    "letter",
    "acc",
    16,
    _one_over_options,
    "A sentence and its point among the most similar points; answer the letter.",
)
_register(
    "CAT-GRA",
    "code",
    "acc",
    16,
    _one_over_options,
    "A sentence and its point among every point of its category; answer the code.",
)
_register(
    "CON-INS-F10",
    "tf-sequence",
    "sub-acc",
    64,
    constant(0.5),
    "Confusing instances only, each to be judged F; scored per sentence.",
)
_register(
    "CON-INS-T5F5",
    "tf-sequence",
    "sub-acc",
    64,
    constant(0.5),
    "Examples and confusing instances shuffled; scored per sentence.",
)
