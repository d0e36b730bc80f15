"""The grammar-book tasks (paper §3.2, Proof Stand; §3.4, metrics): how each is read and scored.

Tasks 1-4 are scored by accuracy, reported as the mean and standard deviation over seeds of
the base setting, with the accuracy at every other number of options beside it (Figure 4);
the translation task by corpus chrF++ (headline), spBLEU where available, and BLEU.
"""

from __future__ import annotations

from math import comb

from ...api import GenParams, Item, TaskSpec, constant, task
from .scoring import seeded_accuracy, translation_scores

FAMILY = "grammar-book"


def guess_rate(item: Item) -> float:
    """Chance that a uniform guess among the admissible answers is right (base setting).

    The admissible answers are the sets of options of a size the item allows (`positives`).
    Items of the other settings have none (NaN), as the task's headline is the base setting's.
    """
    if not item.meta.get("base", True):
        return float("nan")
    n = int(item.meta.get("n_options") or len(item.meta.get("options") or []) or 1)
    lo, hi = item.meta.get("positives", [1, 1])
    answers = sum(comb(n, k) for k in range(int(lo), min(int(hi), n) + 1))
    return 1.0 / answers if answers else 0.0


for _name, _text in (
    ("GB-TASK1", "Task 1: which grammar description a sentence instantiates."),
    ("GB-TASK2", "Task 2: which sentences show a grammar point."),
    ("GB-TASK3", "Task 3: which grammar points a paragraph shows."),
):
    task(
        TaskSpec(
            name=_name,
            family=FAMILY,
            extractor="letter-set",
            metric="gb-set",
            params=GenParams(max_tokens=24),
            random_baseline=guess_rate,
            aggregate=seeded_accuracy,
            breakdowns=(),
            description=_text,
        )
    )
task(
    TaskSpec(
        name="GB-TASK4",
        family=FAMILY,
        extractor="letter",
        metric="gb-choice",
        params=GenParams(max_tokens=16),
        random_baseline=constant(0.5),
        aggregate=seeded_accuracy,
        breakdowns=(),
        description="Task 4: the grammatically acceptable sentence of a minimal pair.",
    )
)
task(
    TaskSpec(
        name="GB-TRANSLATE",
        family=FAMILY,
        extractor="gb-translation",
        metric="gb-translation",
        headline="chrf++",
        params=GenParams(max_tokens=128),
        aggregate=translation_scores,
        breakdowns=(),
        description="Translate a generated sentence pair (chrF++, spBLEU, BLEU).",
    )
)
