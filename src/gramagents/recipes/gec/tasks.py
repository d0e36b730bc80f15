"""CTSEG (`../shared/seeds/004_*`): grammar-item minimal pairs for grammatical error correction.

Banks built from the accepted pairs of every grammar item:

- `GEC-BASELINE`: correct the ungrammatical sentence with the paper's baseline prompt
  (Appendix C, Table 12, first row);
- `GEC-GUIDED`: the same with the grammar-item-guided prompt (second row);
- `GEC-PAIR`: the pair as a minimal pair scored by log-likelihood (local models, or servers
  with prompt log-probabilities), with the conditioning the recipe names (`conditioning`,
  default `spaced`: lm-eval's BLiMP tasks'); with `eval --pairs choice`, `GEC-PAIR-CHOICE`
  asks it as a forced choice instead (`pairs/choice.en.md`), for any model.

Corrections are scored in M2 (ERRANT edits, span-based correction) against the Step 2
reference (annotator 0) and the Step 3 references (annotators 1+): per grammar item,
precision, recall and F0.5 over its sentences; per CEFR level and overall, macro averages over
items (Table 3); per-item recall (Table 4); targeted recall with the Step 2 reference only
("Single Ref") and with all references ("All Ref", Table 6).
"""

from __future__ import annotations

from ...api import GenParams, TaskSpec, choice_form, constant, task
from .aggregate import aggregate_m2

FAMILY = "gec"

for _name, _text in (
    ("GEC-BASELINE", "Correct the sentence (baseline prompt)."),
    ("GEC-GUIDED", "Correct the sentence, told the grammar item taught."),
):
    task(
        TaskSpec(
            name=_name,
            family=FAMILY,
            extractor="correction",
            metric="m2",
            headline="f0.5",
            params=GenParams(max_tokens=96),
            aggregate=aggregate_m2,
            breakdowns=(),  # per level: the M2 macro averages of Table 3
            description=_text,
        )
    )
PAIR = task(
    TaskSpec(
        name="GEC-PAIR",
        family=FAMILY,
        extractor="loglikelihood",
        metric="pair",
        mode="loglikelihood",
        conditioning="spaced",  # English pairs: as lm-eval's BLiMP tasks
        random_baseline=constant(0.5),
        breakdowns=("level", "point"),
        description="Is the Step 2 correction likelier than the ungrammatical sentence?",
    )
)
task(choice_form(PAIR, "pairs/choice.en.md"))
