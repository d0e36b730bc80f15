"""Who judges an eval's open answers: the jury's specs, their backends, and self-judging.

The jury is what the eval names (`--judge-model`, once or several times), else the judges
of the recipe that built the dataset (its `judges` key), else the embedded default judge.
A judge that is also a model under test grades its own answers, which judges favour
(Panickssery et al. 2024): a judge that was named is refused for that unless
`--allow-self-judge`, and every self-judged pair is flagged in the manifest and the report.
The default judge alone is exempt from the refusal, only flagged, whether or not a caller
spells it out: it is the embedded SmolLM2, the same as the default model under test, and a
quick eval with neither named must keep working (it is a smoke test of the workflow, not a
measurement).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import GramagentsError, SpecError
from ..models import BackendSettings, create_backend
from ..models.base import Backend
from ..sources.datasets import Dataset

DEFAULT_JUDGE = "smollm2"


@dataclass
class Jury:
    """The judges of a run, as checked before its folder is opened."""

    backends: list[Backend]
    rule: str
    named: bool
    """The judges were named (by the eval, or the recipe), not the default."""
    self_judged: list[dict[str, str]] = field(default_factory=list)
    """`{"model", "judge"}` for each model under test that a judge of the jury also is."""

    @property
    def labels(self) -> list[str]:
        """The judges' names, in the jury's order."""
        return [b.spec.label for b in self.backends]

    @property
    def name(self) -> str:
        """The jury as the manifest's `judge.model` and the resume's `judge` input name it.

        One judge: its name, as before juries. Several: their names and the rule.
        """
        labels = self.labels
        return labels[0] if len(labels) == 1 else " + ".join(labels) + f" ({self.rule})"


def jury_specs(judge: str | list[str] | None, dataset: Dataset) -> tuple[list[str], bool]:
    """The jury's specs and whether they were named (see the module docstring).

    The default judge alone counts as not named, even when a caller passes its spec.
    """
    if isinstance(judge, str):
        specs = [judge]
    elif judge:
        specs = list(judge)
    else:
        specs = _recipe_judges(dataset.info.get("recipe")) or [DEFAULT_JUDGE]
    return specs, specs != [DEFAULT_JUDGE]


def _recipe_judges(recipe: Any) -> list[str]:
    """The `judges` of the recipe that built the dataset (none when it cannot be found)."""
    if not isinstance(recipe, str) or not recipe:
        return []
    from ..resources import recipe_path
    from .recipe import load_recipe

    try:
        recipe_path(recipe)
    except GramagentsError:  # a dataset of a recipe not installed here: the default judge
        return []
    return list(load_recipe(recipe)[0].judges)


def open_jury(
    specs: list[str],
    named: bool,
    rule: str,
    models: list[Backend],
    settings: BackendSettings,
    allow_self_judge: bool = False,
) -> Jury:
    """The jury's backends (not yet checked), its self-judged pairs, or one line refusing it.

    Raises:
        GramagentsError: A judge named twice, an unknown rule, or a named judge that is also
            a model under test without `allow_self_judge`.
    """
    from ..judging.jury import RULES

    if rule not in RULES:
        raise GramagentsError(f"--jury {rule}: not a rule (rules: {', '.join(RULES)})")
    backends = [create_backend(spec, settings) for spec in specs]
    jury = Jury(backends, rule, named)
    labels = jury.labels
    if len(set(labels)) != len(labels):
        raise SpecError(", ".join(specs), "--judge-model: the same judge is named twice")
    for judge in backends:
        for model in models:
            if _same_model(judge, model):
                jury.self_judged.append({"model": model.spec.label, "judge": judge.spec.label})
    if jury.self_judged and named and not allow_self_judge:
        pair = jury.self_judged[0]
        raise GramagentsError(
            f"--judge-model {pair['judge']}: is also a model under test (--model "
            f"{pair['model']}), and a judge grading its own answers favours them; name another "
            "judge, or pass --allow-self-judge to keep it (the report then flags it)"
        )
    return jury


def _same_model(judge: Backend, model: Backend) -> bool:
    """Whether two backends are one model (decoding apart): same backend kind and identity."""
    return judge.name == model.name and judge.identity() == model.identity()
