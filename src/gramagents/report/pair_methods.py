"""The eval report's section on minimal pairs: which method each number used.

A pair scored by log-probabilities (`CLIMP`) and one asked as a forced choice
(`CLIMP-CHOICE`) are different measurements (Hu & Levy 2023 find prompting usually scores
lower), so the report names the method of every minimal-pair task, and for a forced choice
gives its accuracy in each order and the consistency across orders, beside their chance
levels, so that a model answering by position is seen as such.
"""

from __future__ import annotations

from ..records import EvalManifest, RunManifest
from ..tasks import TaskSpec, get_task
from .markdown import markdown_table, report_section
from .mdtext import code_span, md_text
from .summary import Summary

CHOICE_METRICS = ("acc", "acc_strict", "acc_good_first", "acc_good_second", "consistency")
CHANCE = {
    "acc": 0.5,
    "acc_strict": 0.25,
    "acc_good_first": 0.5,
    "acc_good_second": 0.5,
    "consistency": 0.5,
}
"""What a model that picks a sentence at random scores on each forced-choice metric."""
HEADER = ["model", "task", "method", "acc", "acc_strict", "good first", "good second"]


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _pair_specs(tasks: list[str]) -> dict[str, TaskSpec]:
    specs = {task: get_task(task) for task in tasks}
    return {
        task: spec
        for task, spec in specs.items()
        if spec is not None and spec.mode in ("loglikelihood", "choice")
    }


def _method_line(task: str, spec: TaskSpec, manifest: EvalManifest) -> str:
    if spec.mode == "choice":
        return (
            f"- {md_text(task)}: **forced choice** (prompt {code_span(spec.prompt or '?')}): "
            "each pair shown as sentences 1 and 2 and the model asked which is acceptable, "
            "once with the grammatical sentence first and once second. `acc` is the share of "
            "presentations answered right (chance 0.5); `acc_strict` the share of pairs right in "
            "both orders (chance 0.25); consistency the share of pairs where both orders chose "
            "the same sentence (chance 0.5; 0: every answer followed the position, not the "
            "sentence); invalid: pairs with a reply unread in either order."
        )
    how = manifest.conditioning.get(task)
    conditioning = f", conditioning {code_span(how)}" if how else ""
    return (
        f"- {md_text(task)}: **log-probability**{conditioning}: right when the grammatical "
        "sentence is the likelier (`acc`: summed log-probability; `acc_mean`: per-token mean)."
    )


def _rows(manifest: EvalManifest, summary: Summary, specs: dict[str, TaskSpec]) -> list[list[str]]:
    rows = []
    for task, spec in specs.items():
        if spec.mode == "choice":
            rows.append(
                ["RANDOM", task, "forced choice", *(_fmt(CHANCE[m]) for m in CHOICE_METRICS), "—"]
            )
    for model in manifest.models:
        for task, spec in specs.items():
            tally = summary.tallies.get((model, task))
            if tally is None:
                continue
            invalid = _fmt(tally.invalid_rate)
            if spec.mode != "choice":
                row = [model, task, "log-probability", _fmt(tally.score), "—", "—", "—", "—"]
                rows.append([*row, invalid])
                continue
            values = [tally.score] + [
                extra.score if (extra := summary.extra.get((model, task, m))) else None
                for m in CHOICE_METRICS[1:]
            ]
            rows.append([model, task, "forced choice", *map(_fmt, values), invalid])
    return rows


def _consistency(manifest: EvalManifest, summary: Summary, specs: dict[str, TaskSpec]) -> str:
    said = [
        f"{md_text(model)} {_fmt(extra.score)} on {md_text(task)}"
        for model in manifest.models
        for task, spec in specs.items()
        if spec.mode == "choice" and (extra := summary.extra.get((model, task, "consistency")))
    ]
    if not said:
        return ""
    return (
        f"Consistency across orders: {'; '.join(said)} (chance 0.5; a model that always picks "
        "one position scores 0, right in one order and wrong in the other)."
    )


def pair_method_lines(manifest: RunManifest, summary: Summary) -> list[str]:
    """The section, for an eval with minimal-pair tasks (none for other runs)."""
    if not isinstance(manifest, EvalManifest):
        return []
    specs = _pair_specs(list(manifest.tasks) or sorted({t for _, t in summary.tallies}))
    if not specs:
        return []
    lines = ["## Minimal pairs: how each was asked", ""]
    lines += [_method_line(task, spec, manifest) for task, spec in specs.items()]
    lines += [
        "",
        *markdown_table([*HEADER, "consistency", "invalid"], _rows(manifest, summary, specs)),
    ]
    consistency = _consistency(manifest, summary, specs)
    return [*lines, *(["", consistency] if consistency else []), ""]


report_section("pair-methods", pair_method_lines)
