"""EduEval's quality-control filters (Appendix C.1.4): difficulty calibration and anomalies.

- `baseline-calibration`: baseline models answer the objective items a few times; items above
  `high` or below `low` accuracy are flagged (too easy, too hard). Runs with agents on only.
- `item-anomalies`: prompt-length outliers are flagged; a task's answer key skewed away from
  uniform (items with the same number of options together) is counted, and a few of its items
  are flagged as spot checks of the key.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...api import (
    BuildView,
    ChatRequest,
    FilterSpec,
    GenParams,
    NodeEnv,
    NodeUpdate,
    PromptTemplate,
    filter_node,
    load_prompt,
)
from .agents import OBJECTIVE
from .sources import EduItem


class CalibrateOptions(BaseModel):
    """Options of `baseline-calibration`."""

    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(default_factory=list)
    """Baseline model specs."""
    samples: int = Field(default=3, ge=1)
    temperature: float = 0.7
    high: float = 0.95
    low: float = 0.10
    prompt: str = "edu/mc.md"


def mc_vars(item: EduItem, shots: list[dict[str, Any]]) -> dict[str, Any]:
    """Template variables of a multiple-choice item."""
    return {
        "subject": item.subject or "",
        "question": item.prompt,
        "options": item.options or {},
        "shots": shots,
    }


def _request(template: PromptTemplate, item: EduItem, params: GenParams, sample: int) -> Any:
    return ChatRequest(
        messages=template.render(mc_vars(item, [])),
        params=params,
        prompt_hash=template.hash,
        sample=sample,
    )


async def calibrate(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Baseline accuracy per objective item; too easy and too hard ones flagged."""
    from .metrics import extract_choice
    from .qc import difficulty_flags

    objective = [i for i in view.of_type(EduItem) if i.shape in OBJECTIVE and i.options]
    if not env.agents_on or not options.models or not objective:
        return NodeUpdate(counts={"checked": 0, "flagged": 0})
    template = load_prompt(options.prompt)
    right: dict[str, list[float]] = defaultdict(list)
    for spec in options.models:
        model = env.model(spec)
        for sample in range(options.samples):
            # the model spec's own decoding options, if any, replace the calibration's
            params = model.params(
                GenParams(temperature=options.temperature, max_tokens=32, seed=sample)
            )
            requests = [_request(template, i, params, sample) for i in objective]
            answers = await model.generate(requests)
            for item, answer in zip(objective, answers, strict=True):
                letter, _ = extract_choice(answer.text or "", "".join(item.options or {}))
                right[item.id].append(1.0 if letter == item.answer else 0.0)
    accuracy = {k: sum(v) / len(v) for k, v in right.items()}
    flags = difficulty_flags(accuracy, high=options.high, low=options.low)
    return NodeUpdate(
        records=[i.model_copy(update={"calibration": accuracy.get(i.id)}) for i in objective],
        flags={
            k: [f"difficulty: {flag} (baseline accuracy {accuracy[k]:.2f})"]
            for k, flag in flags.items()
        },
        counts={"checked": len(objective), "flagged": len(flags)},
    )


filter_node(
    FilterSpec(
        name="baseline-calibration",
        run=calibrate,
        options=CalibrateOptions,
        models=lambda options: list(options.models),
        description="Flag objective items baseline models find too easy or too hard.",
    )
)


class AnomalyOptions(BaseModel):
    """Options of `item-anomalies` (see `qc`)."""

    model_config = ConfigDict(extra="forbid")

    fence: float = Field(default=2.0, gt=0)
    """Tukey's fences on log prompt length, in interquartile ranges beyond the quartiles."""
    alpha: float = Field(default=0.01, gt=0, lt=1)
    """Significance of the answer-key test, over all groups tested (Bonferroni)."""
    spot_checks: int = Field(default=3, ge=0)
    """Items of each skewed key that go to review."""


async def anomalies(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Length outliers and skewed answer keys (a few spot checks of each), flagged."""
    from .qc import anomaly_flags

    items = view.of_type(EduItem)
    found, counts = anomaly_flags(
        items, options.fence, options.alpha, options.spot_checks, env.seed
    )
    return NodeUpdate(flags=found, counts={"checked": len(items), "flagged": len(found), **counts})


filter_node(
    FilterSpec(
        name="item-anomalies",
        run=anomalies,
        options=AnomalyOptions,
        description="Flag prompt-length outliers and spot checks of skewed answer keys.",
    )
)
