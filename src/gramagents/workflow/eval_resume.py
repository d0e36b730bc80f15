"""What an eval's answers depend on, and which recorded answers a change of it touches.

The inputs of an answer: the dataset (its hash), the prompt template an item is rendered with,
for a judged item its rubric, the judge's prompt and the judges (the jury: its judges and
its rule, as `Jury.name` writes them), for a minimal pair its task's conditioning and how its
pairs are asked (log-probabilities or a forced choice: both keep the pair's id, so the method
tells their records apart), and the model's endpoint (a model's name leaves its endpoint out,
so that a server restarted on another port is the same model: `ModelSpec.label`). The
manifest keeps each as a flat key (`prompts/NAME`, `rubrics/ID`, `judge`, `conditioning/TASK`,
`pairs/TASK`, `endpoint/MODEL`); a resume compares the manifest's with the run's own, and the
keys of an item say whether a change touches its records. A manifest written before `pairs`
was recorded asked its pairs by log-probability.

Which items the run asks is an input too (`sample`: `--limit` and `--seed`, and how they
sample): a resume that samples otherwise would leave the answers of items outside its sample
in the folder, counted by its summary but not by its manifest. Those answers are what such a
change touches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..errors import RunError
from ..records import EvalManifest, InputChange, Item
from ..runtime.reconcile import Stale, count_stale
from ..runtime.run import ResumeChanged, Run
from ..tasks import TaskSpec
from ..tasks.registry import rubric_of

JUDGE_KEY = "judge"
SAMPLE_KEY = "sample"
INPUT_PREFIXES = ("prompts/", "rubrics/", "conditioning/", "pairs/", "endpoint/")


def endpoint_text(endpoint: str | None) -> str:
    """An endpoint as the manifest records it: its base URL without credentials."""
    if not endpoint:
        return "local"
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(endpoint)
    if parts.username is None and parts.password is None:
        return endpoint
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def sample_inputs(sampling: dict[str, Any] | None) -> dict[str, str]:
    """How a run chose its items, as input keys (`workflow/selection.py` says the sampling).

    `sample`: the options (`--limit 3 --seed 1234`, or every item); `sample/method`: a hash of
    how the sample is drawn, which only a version of gramagents that samples otherwise changes.
    """
    if not sampling:
        return {SAMPLE_KEY: "every item (no --limit)"}
    how = {k: v for k, v in sampling.items() if k not in ("limit", "seed")}
    method = hashlib.sha256(json.dumps(how, sort_keys=True).encode()).hexdigest()
    return {
        SAMPLE_KEY: f"--limit {sampling.get('limit')} --seed {sampling.get('seed')}",
        f"{SAMPLE_KEY}/method": method,
    }


def manifest_inputs(manifest: EvalManifest) -> dict[str, str]:
    """Every input an eval manifest records, as flat keys (see the module docstring)."""
    inputs = {k: v for k, v in manifest.hashes.items() if k.startswith(INPUT_PREFIXES)}
    if manifest.dataset is not None:
        inputs.update(sample_inputs(manifest.dataset.get("sample")))
    inputs.update({f"conditioning/{t}": c for t, c in manifest.conditioning.items()})
    inputs.update({f"pairs/{t}": "loglik" for t in manifest.conditioning})
    inputs.update({f"pairs/{t}": m for t, m in manifest.pairs.items()})
    inputs.update({f"endpoint/{m}": e for m, e in manifest.endpoints.items()})
    if manifest.judge:
        inputs[JUDGE_KEY] = str(manifest.judge.get("model"))
    return inputs


def changed(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Inputs both sides know that differ: key to (before, after)."""
    return {k: (before[k], v) for k, v in after.items() if k in before and before[k] != v}


class ItemInputs:
    """The input keys of each item's records; `stale(changes)` says whose changed."""

    def __init__(
        self,
        items: list[Item],
        tasks: dict[str, TaskSpec],
        rubric_ids: dict[str, str],
        judge_prompt: str,
        judges: list[str],
    ) -> None:
        self._items = {item.id: item for item in items}
        self._tasks = tasks
        self._rubric_ids = rubric_ids
        self._judged = (f"prompts/{judge_prompt}", JUDGE_KEY) + tuple(
            f"endpoint/{judge}" for judge in judges
        )
        self._keys: dict[str, frozenset[str]] = {}

    def keys(self, item_id: str) -> frozenset[str]:
        """The input keys of an item's answer, whatever the model."""
        keys = self._keys.get(item_id)
        if keys is None:
            keys = self._keys[item_id] = self._of(self._items.get(item_id))
        return keys

    def _of(self, item: Item | None) -> frozenset[str]:
        if item is None or item.task not in self._tasks:
            return frozenset()
        spec = self._tasks[item.task]
        if spec.mode == "loglikelihood":
            return frozenset({f"conditioning/{item.task}", f"pairs/{item.task}"})
        keys = {f"prompts/{item.prompt.template}"}
        if spec.choice_of is not None:
            keys.add(f"pairs/{spec.choice_of}")
        rubric = rubric_of(item, self._tasks)
        if rubric is not None:
            keys.add(f"rubrics/{self._rubric_ids.get(rubric, rubric)}")
            keys.update(self._judged)
        return frozenset(keys)

    def stale(self, changes: Mapping[str, tuple[str, str]]) -> Stale:
        """`stale(model, item)`: whether a change touches that model's answer to the item."""
        resampled = any(k.split("/")[0] == SAMPLE_KEY for k in changes)

        def touched(model: str, item_id: str) -> bool:
            if resampled and item_id not in self._items:  # outside this run's sample
                return True
            return f"endpoint/{model}" in changes or not changes.keys().isdisjoint(
                self.keys(item_id)
            )

        return touched


def check_resume(
    run: Run,
    inputs: dict[str, str],
    dataset_digest: str,
    item_inputs: ItemInputs,
    policy: ResumeChanged,
) -> tuple[EvalManifest | None, list[InputChange], Stale | None]:
    """The earlier manifest, the changes to record and the predicate of stale records.

    Refuses (one line) a folder of another dataset, and one whose inputs changed under
    recorded answers unless `policy` is `reask`.
    """
    previous = run.found
    if previous is None:
        return None, [], None
    assert isinstance(previous, EvalManifest)  # Run.open checked the kind
    if previous.hashes.get("dataset") != dataset_digest:
        raise RunError(
            f"--run-dir {run.path}: holds an eval of a different dataset; use a new --run-dir"
        )
    changes = changed(manifest_inputs(previous), inputs)
    if not changes:
        return previous, [], None
    stale = item_inputs.stale(changes)
    affected = count_stale(run, stale)
    recorded = run.check_changes(changes, affected, policy)
    return previous, recorded, stale
