"""Published minimal-pair sets scored by log-likelihood: BLiMP and CLiMP, and as a forced choice.

Each task's conditioning (how a sentence is scored, models/conditioning.py) defaults to what
lm-evaluation-harness's published definitions use for the language: BLiMP as lm-eval's BLiMP
tasks (the sentence after a space, its default target delimiter); CLiMP, for which lm-eval
has no task, as its Chinese minimal-pair tasks (ZhoBLiMP: no delimiter, the sentence as a
text begins). `--conditioning` chooses the other.

`--pairs choice` asks the same pairs as a forced choice (`BLIMP-CHOICE`, `CLIMP-CHOICE`), in
the language of the pairs: `pairs/choice.en.md` for BLiMP, `pairs/choice.zh.md` for CLiMP.
"""

from __future__ import annotations

from ...api import TaskSpec, choice_form, constant, task

BLIMP = task(
    TaskSpec(
        name="BLIMP",
        family="minimal-pairs",
        extractor="loglikelihood",
        metric="pair",
        mode="loglikelihood",
        conditioning="spaced",
        random_baseline=constant(0.5),
        breakdowns=("field", "linguistics_term", "UID"),
        description="BLiMP: is the grammatical sentence the likelier one?",
    )
)
CLIMP = task(
    TaskSpec(
        name="CLIMP",
        family="minimal-pairs",
        extractor="loglikelihood",
        metric="pair",
        mode="loglikelihood",
        conditioning="bare",
        random_baseline=constant(0.5),
        breakdowns=("phenomenon", "paradigm"),
        description="CLiMP: is the grammatical sentence the likelier one?",
    )
)
task(choice_form(BLIMP, "pairs/choice.en.md"))
task(choice_form(CLIMP, "pairs/choice.zh.md"))
