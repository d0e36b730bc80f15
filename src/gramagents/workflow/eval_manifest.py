"""An eval's manifest: what it was run on, and what it did.

The first is known before anything is asked; the second is counted when the run ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import Model
from ..models.base import Backend
from ..records import Counts, EvalManifest, InputChange, Item
from ..runtime.run import Run
from ..runtime.rundir import now_iso
from ..sources.datasets import Dataset
from ..sources.duplicates import summary
from ..templates import PromptTemplate
from ..versions import package_versions
from .eval_resume import JUDGE_KEY, endpoint_text, sample_inputs
from .selection import Selection

if TYPE_CHECKING:
    from ..judging.rubric import Rubric
    from .eval import EvalOptions
    from .eval_jury import Jury


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
    jury: Jury | None
    """The rubric judges, when some task is judged."""

    def inputs(self) -> dict[str, str]:
        """Every input of the run's answers, as flat keys (workflow/eval_resume.py)."""
        inputs = {f"prompts/{name}": t.hash for name, t in self.templates.items()}
        inputs.update({f"rubrics/{r.id}": r.hash for r in self.rubrics.values()})
        inputs.update({f"conditioning/{t}": c for t, c in self.selection.conditioning.items()})
        inputs.update({f"pairs/{t}": m for t, m in self.selection.pairs.items()})
        inputs.update({f"endpoint/{m}": e for m, e in self.endpoints().items()})
        if self.jury is not None:
            inputs[JUDGE_KEY] = self.jury.name
        inputs.update(sample_inputs(self.selection.sampling))
        return inputs

    def endpoints(self) -> dict[str, str]:
        """Per model (the judges included), where it is asked."""
        backends = [*self.backends, *(self.jury.backends if self.jury is not None else [])]
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
        conditioning=_conditioning(previous, selection),
        pairs={**(previous.pairs if previous else {}), **selection.pairs},
        random_baselines=selection.random_baselines,
        no_gold=selection.no_gold,
        judge=judge_block(setting.jury, []) if setting.jury is not None else None,
        changes=[*(previous.changes if previous else []), *changes],
        set_aside=previous.set_aside if previous else 0,
    )


def _conditioning(previous: EvalManifest | None, selection: Selection) -> dict[str, str]:
    """The earlier run's conditioning (its records keep it) and this run's.

    None of a task whose pairs this run asks as a forced choice.
    """
    kept = {
        task: how
        for task, how in (previous.conditioning if previous else {}).items()
        if selection.pairs.get(task, "loglik") == "loglik"
    }
    return {**kept, **selection.conditioning}


def count(
    manifest: EvalManifest,
    models: list[Model],
    items: list[Item],
    resumed: int,
    outcomes: tuple[dict[tuple[str, str], bool], set[tuple[str, str]]],
    judges: list[Model],
) -> None:
    """Set the manifest's counts and status from what the folder holds.

    Only the run's models and items count. `outcomes`: (model, item) to whether its answer
    was invalid, for every item done; and the (model, item) this run failed. The rest were
    not asked.
    """
    done, failures = outcomes
    labels = {m.label for m in models}
    in_scope = len(labels) * len(items)
    ids = {i.id for i in items}
    finished = [bad for (label, item), bad in done.items() if label in labels and item in ids]
    failed = sum(1 for key in failures if key[0] in labels and key[1] in ids and key not in done)
    manifest.counts = Counts(
        items=in_scope,
        requests_sent=sum(m.stats.requests_sent for m in [*models, *judges]),
        cache_hits=sum(m.stats.cache_hits for m in models) + resumed,
        invalid=sum(finished),
        failed=failed,
        not_asked=in_scope - len(finished) - failed,
        shared=sum(m.stats.shared for m in [*models, *judges]),
    )
    if judges and manifest.judge is not None:
        manifest.judge.update(judge_counts(judges))
    manifest.status = "complete" if len(finished) == in_scope else "partial"
    manifest.reason = (
        None
        if manifest.status == "complete"
        else f"{in_scope - len(finished)} answers missing (failed or not asked yet; "
        "`failures.jsonl` says why); re-run the same command to ask them"
    )


def judge_block(jury: Jury, judges: list[Model]) -> dict[str, Any]:
    """The manifest's `judge`: the jury, its rule, its self-judged pairs and its counts.

    `model` names the jury as the resume compares it (`Jury.name`: one judge's name, as
    before juries); `requests_sent` and `cache_hits` are the whole jury's, `judges` each
    judge's (with its tokens where the server reported them).
    """
    block: dict[str, Any] = {
        "model": jury.name,
        "models": jury.labels,
        "jury": jury.rule,
        "named": jury.named,
        "self_judged": list(jury.self_judged),
        "requests_sent": 0,
        "cache_hits": 0,
    }
    block.update(judge_counts(judges))
    return block


def judge_counts(judges: list[Model]) -> dict[str, Any]:
    """The jury's requests and cache hits, in all and per judge."""
    per_judge = {j.label: j.stats.snapshot() for j in judges}
    return {
        "requests_sent": sum(s["requests_sent"] for s in per_judge.values()),
        "cache_hits": sum(s["cache_hits"] for s in per_judge.values()),
        "judges": per_judge,
    }
