"""An eval's manifest: what it was run on, and what it did.

The first is known before anything is asked; the second is counted when the run ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import Model
from ..models.base import Backend
from ..records import Counts, EvalManifest, InputChange, Item
from ..runtime.run import Run
from ..runtime.rundir import now_iso
from ..sources.datasets import Dataset
from ..sources.duplicates import summary
from ..templates import PromptTemplate
from ..versions import package_versions
from .eval_resume import JUDGE_KEY, endpoint_text
from .selection import Selection

if TYPE_CHECKING:
    from ..judging.rubric import Rubric
    from .eval import EvalOptions


@dataclass
class EvalSetting:
    """What an eval's answers depend on, gathered before its run folder is opened."""

    dataset: Dataset
    selection: Selection
    backends: list[Backend]
    templates: dict[str, PromptTemplate]
    """Every template the run renders (the judge's included), by name."""
    rubrics: dict[str, Rubric]
    """The rubrics of the judged items, by the name items and tasks give."""
    judge: Backend | None

    def inputs(self) -> dict[str, str]:
        """Every input of the run's answers, as flat keys (workflow/eval_resume.py)."""
        inputs = {f"prompts/{name}": t.hash for name, t in self.templates.items()}
        inputs.update({f"rubrics/{r.id}": r.hash for r in self.rubrics.values()})
        inputs.update({f"conditioning/{t}": c for t, c in self.selection.conditioning.items()})
        inputs.update({f"endpoint/{m}": e for m, e in self.endpoints().items()})
        if self.judge is not None:
            inputs[JUDGE_KEY] = self.judge.spec.label
        return inputs

    def endpoints(self) -> dict[str, str]:
        """Per model (the judge included), where it is asked."""
        backends = [*self.backends, *([self.judge] if self.judge is not None else [])]
        return {b.spec.label: endpoint_text(b.spec.endpoint) for b in backends}


def eval_manifest(
    run: Run,
    options: EvalOptions,
    setting: EvalSetting,
    previous: EvalManifest | None,
    changes: list[InputChange],
) -> EvalManifest:
    """The manifest of an eval about to start.

    Its inputs merge with the earlier run's, so that the records an earlier run left (of
    models or items not in this run) keep theirs.
    """
    dataset, selection = setting.dataset, setting.selection
    labels = [b.spec.label for b in setting.backends]
    hashes = dict(previous.hashes) if previous else {}
    hashes["dataset"] = dataset.digest
    inputs = setting.inputs().items()
    hashes.update({k: v for k, v in inputs if k.startswith(("prompts/", "rubrics/"))})
    judge = setting.judge
    return EvalManifest(
        run_id=run.run_id,
        command=options.command,
        recipe=dataset.info.get("recipe"),
        models=list(dict.fromkeys([*(previous.models if previous else []), *labels])),
        endpoints={**(previous.endpoints if previous else {}), **setting.endpoints()},
        seed=options.seed,
        versions=package_versions(),
        hashes=hashes,
        started=previous.started if previous else now_iso(),
        dataset={
            "path": str(dataset.path),
            "format": options.fmt,
            "items": len(selection.items),
            **dataset.info,
            "duplicates": summary(dataset.duplicates),
            **({"sample": selection.sampling} if selection.sampling else {}),
        },
        tasks=selection.per_task,
        conditioning={**(previous.conditioning if previous else {}), **selection.conditioning},
        random_baselines=selection.random_baselines,
        no_gold=selection.no_gold,
        judge={"model": judge.spec.label, "requests_sent": 0, "cache_hits": 0} if judge else None,
        changes=[*(previous.changes if previous else []), *changes],
        set_aside=previous.set_aside if previous else 0,
    )


def count(
    manifest: EvalManifest,
    models: list[Model],
    items: list[Item],
    resumed: int,
    done: dict[tuple[str, str], bool],
    judge: Model | None,
) -> None:
    """Set the manifest's counts and status from what the folder holds.

    Only the run's models and items count; `done` maps (model, item) to whether its answer
    was invalid.
    """
    labels = {m.label for m in models}
    in_scope = len(labels) * len(items)
    ids = {i.id for i in items}
    finished = [bad for (label, item), bad in done.items() if label in labels and item in ids]
    manifest.counts = Counts(
        items=in_scope,
        requests_sent=sum(m.stats.requests_sent for m in models)
        + (judge.stats.requests_sent if judge else 0),
        cache_hits=sum(m.stats.cache_hits for m in models) + resumed,
        invalid=sum(finished),
        failed=in_scope - len(finished),
        shared=sum(m.stats.shared for m in models) + (judge.stats.shared if judge else 0),
    )
    if judge is not None:
        manifest.judge = {
            "model": judge.label,
            "requests_sent": judge.stats.requests_sent,
            "cache_hits": judge.stats.cache_hits,
        }
    manifest.status = "complete" if len(finished) == in_scope else "partial"
    manifest.reason = (
        None
        if manifest.status == "complete"
        else f"{in_scope - len(finished)} answers missing (failed or not asked yet; "
        "`failures.jsonl` says why); re-run the same command to ask them"
    )
