"""Published minimal-pair sets scored by log-likelihood: BLiMP and CLiMP."""

from __future__ import annotations

from ...tasks.registry import TaskSpec, constant, task

task(
    TaskSpec(
        name="BLIMP",
        family="minimal-pairs",
        extractor="loglikelihood",
        metric="pair",
        mode="loglikelihood",
        random_baseline=constant(0.5),
        breakdowns=("field", "linguistics_term", "UID"),
        description="BLiMP: is the grammatical sentence the likelier one?",
    )
)
task(
    TaskSpec(
        name="CLIMP",
        family="minimal-pairs",
        extractor="loglikelihood",
        metric="pair",
        mode="loglikelihood",
        random_baseline=constant(0.5),
        breakdowns=("phenomenon", "paradigm"),
        description="CLiMP: is the grammatical sentence the likelier one?",
    )
)
