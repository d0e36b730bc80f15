"""`gramagents judge-check RUN`: probe a run's judges and flag those whose scores move.

A seeded sample of the run's judged answers (`limit`) is judged again by each judge of the
run: as it was (the baseline, from the cache when the judgment is unchanged), and under each
probe (judging/probes.py). check_stats.py turns the pairs into a row per judge and probe;
`judge-check.json` and `judge-check.md` are written into the run folder and the run's report
and viewer are refreshed to show them. The command holds the run folder's lock throughout.

The judges are the run's: each is rebuilt from its name and the endpoint the manifest records
(credentials and transport options are not recorded); `--judge-model SPEC` gives a judge's
full spec instead, matched to the run's judge by name.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GramagentsError, RunError
from ..models import BackendSettings, Model, create_backend
from ..models.base import Backend
from ..models.spec import parse_spec
from ..progress import ProgressSink, SilentProgress
from ..records import EvalManifest
from ..runtime.cache import open_cache
from ..runtime.retry import RetryPolicy
from ..runtime.run import Run
from .check_sample import Probed, sample_answers
from .check_stats import DEFAULT_THRESHOLD, CheckSettings, Pair, check_markdown, check_rows
from .probes import PROBES, probe_answer

if TYPE_CHECKING:
    from ..templates import PromptTemplate

FILES = ("judge-check.json", "judge-check.md")


@dataclass
class CheckOptions:
    """Settings of one `gramagents judge-check`."""

    limit: int = 100
    """Judged answers probed at most, sampled with `seed`."""
    seed: int = 1234
    probes: tuple[str, ...] = PROBES
    threshold: float = DEFAULT_THRESHOLD
    """The least change (share of the scale) a flag needs."""
    n_boot: int = 2000
    judges: list[str] = field(default_factory=list)
    """Full specs of the run's judges (matched by name), for what the manifest does not keep."""
    concurrency: int = 16
    use_cache: bool = True
    cache_path: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass
class CheckResult:
    """What the check found and wrote."""

    data: dict[str, Any]
    paths: list[Path]
    requests_sent: int


async def judge_check(
    run_dir: str | Path, options: CheckOptions, progress: ProgressSink | None = None
) -> CheckResult:
    """Probe the judges of an eval run; see the module docstring.

    Raises:
        GramagentsError: Not an eval run, no judged answers, a judge that cannot be rebuilt
            or reached, an unknown probe.
    """
    unknown = [p for p in options.probes if p not in PROBES]
    if unknown:
        raise GramagentsError(f"--probe {unknown[0]}: not a probe ({', '.join(PROBES)})")
    progress = progress or SilentProgress()
    with Run.existing(run_dir, "eval") as run:
        manifest = run.found
        assert isinstance(manifest, EvalManifest)
        backends = _judges(run, manifest, options)
        sample = sample_answers(run, manifest, options.limit, options.seed)
        try:
            for backend in backends:
                await backend.check()
            data, sent = await _probe(backends, sample, options, progress)
        finally:
            progress.stop()
            for backend in backends:
                await backend.aclose()
        run.write_text(FILES[0], json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        run.write_text(FILES[1], check_markdown(data))
        from ..extras import installed
        from ..report.runs import refresh_report

        refresh_report(run.path, view=installed("viewer"))  # the report and viewer show it
    return CheckResult(data, [run.file(name) for name in FILES], sent)


def _judges(run: Run, manifest: EvalManifest, options: CheckOptions) -> list[Backend]:
    """The run's judges, each from the spec given for it or rebuilt from the manifest."""
    block = manifest.judge or {}
    labels = [str(m) for m in block.get("models") or ([block["model"]] if block else [])]
    if not labels:
        raise RunError(f"{run.path}: no judged answers (the eval judged nothing)")
    given = {}
    for spec in options.judges:
        label = parse_spec(spec).label
        if label not in labels:
            raise GramagentsError(
                f"--judge-model {label}: not a judge of this run (its judges: {', '.join(labels)})"
            )
        given[label] = spec
    settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
    return [
        create_backend(given.get(label) or _rebuilt(label, manifest, run), settings)
        for label in labels
    ]


def _rebuilt(label: str, manifest: EvalManifest, run: Run) -> str:
    """A judge's spec from its name and recorded endpoint."""
    if "***" in label:
        raise RunError(
            f"{run.path}: the judge {label} had credentials the manifest does not keep; give "
            "its spec with --judge-model"
        )
    endpoint = manifest.endpoints.get(label, "local")
    if endpoint == "local":
        return label
    body, sep, query = label.partition("?")
    return f"{body}@{endpoint}{sep}{query}"


async def _probe(
    backends: list[Backend], sample: list[Probed], options: CheckOptions, progress: ProgressSink
) -> tuple[dict[str, Any], int]:
    """Judge every sampled answer as it was and under each probe; the rows and requests."""
    from ..judging.rubric import JUDGE_PROMPT
    from ..templates import load_prompt

    template = load_prompt(JUDGE_PROMPT)
    cache = open_cache(options.use_cache, options.cache_path)
    try:
        judges = [Model(b, cache) for b in backends]
        progress.start("judge-check", len(judges) * len(sample) * (1 + len(options.probes)))
        outcomes = await asyncio.gather(
            *(_probe_answer(j, a, template, options, progress) for j in judges for a in sample)
        )
    finally:
        cache.close()
    pairs: dict[tuple[str, str], list[Pair]] = {}
    for found in outcomes:
        for key, pair in found.items():
            pairs.setdefault(key, []).append(pair)
    settings = CheckSettings(options.threshold, options.n_boot, options.seed)
    labels = [j.label for j in judges]
    data = {
        "settings": {
            "limit": options.limit,
            "seed": options.seed,
            "probes": list(options.probes),
            "threshold": options.threshold,
            "n_boot": options.n_boot,
        },
        "answers": len(sample),
        "judges": labels,
        "rows": check_rows(pairs, labels, options.probes, settings),
    }
    return data, sum(j.stats.requests_sent for j in judges)


async def _probe_answer(
    judge: Model,
    answer: Probed,
    template: PromptTemplate,
    options: CheckOptions,
    progress: ProgressSink,
) -> dict[tuple[str, str], Pair]:
    """One judge on one answer: as it was and under each probe (pairs with a total each)."""
    from ..workflow.eval_judge import judge_one

    def judged(text: str, sample: int) -> Awaitable[Any]:
        return judge_one(judge, answer.rubric, answer.task_input, text, template, sample)

    rng = random.Random(f"{options.seed}:{answer.model}:{answer.item_id}")  # the same per judge
    probed = [
        probe_answer(p, answer.answer, answer.language, answer.rubric.scale[1], rng)
        for p in options.probes
    ]
    verdicts = await asyncio.gather(judged(answer.answer, 0), *(judged(t, s) for t, s in probed))
    progress.advance(len(verdicts))
    before, found = verdicts[0].total, {}
    if before is None:
        return {}
    for probe, verdict in zip(options.probes, verdicts[1:], strict=True):
        if verdict.total is not None:
            found[judge.label, probe] = Pair(before, verdict.total, answer.rubric.scale)
    return found
