"""`gramagents eval`: run models over a dataset into a run folder, resumably.

Everything a user can get wrong (dataset, formats, model specs, unreachable servers) is
checked before the run folder is opened. The folder is a `Run` (runtime/run.py): locked while
the eval runs; a folder that already holds an eval of the same dataset is resumed, after its
records are reconciled (runtime/reconcile.py: an item is done when its response and its score
are both there and agree) and its inputs compared with the run's (workflow/eval_resume.py: a
changed template, rubric, judge, conditioning or endpoint is refused, or with
`--resume-changed=reask` the answers it touches are set aside and asked again). What is done
is not asked again; answers whose score line was lost are served from the response cache.
A stop (Ctrl-C, SIGTERM: runtime/interrupt.py) ends the eval within seconds: what was answered
is recorded, the rest is counted not asked, and the folder is left `partial`, to be resumed.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import GramagentsError, NoLoglikelihood, NothingToAsk
from ..models import BackendSettings, Model, create_backend
from ..models.base import Backend
from ..progress import ProgressSink, SilentProgress, Steps
from ..records import EvalManifest, Item, ResponseRecord, ScoreRecord
from ..report import runs as run_reports
from ..report.summary import ScoreEntry, SummaryBuilder
from ..resources import file_hash
from ..runtime.cache import open_cache
from ..runtime.interrupt import STOP
from ..runtime.memory import collected_every, long_lived
from ..runtime.reconcile import FAILURES, RESPONSES, SCORES, Stale, reconcile
from ..runtime.retry import RetryPolicy
from ..runtime.run import ResumeChanged, Run
from ..sources.answers import AnswerFile
from ..sources.datasets import Dataset, open_dataset
from ..templates import load_prompt
from .eval_jury import jury_specs, open_jury
from .eval_manifest import EvalSetting, count, eval_manifest
from .eval_resume import ItemInputs, check_resume
from .eval_work import EvalContext, steps_of
from .pair_conditioning import pair_conditionings
from .pair_methods import LOGLIK, apply_pair_methods, check_pairs
from .selection import Selection, select_items

if TYPE_CHECKING:
    from ..judging.rubric import Rubric

MAX_CHUNKS_IN_FLIGHT = 4
COLLECT_EVERY = 20_000
"""Items between the eval's hand-timed collections of reference cycles (runtime/memory.py)."""


@dataclass
class EvalOptions:
    """Settings of one `gramagents eval` invocation."""

    models: list[str] = field(default_factory=lambda: ["smollm2"])
    fmt: str = "gramagents"
    answers: Path | None = None
    """Gold answers for items whose dataset carries none (CSV `id,answer` or JSONL)."""
    run_dir: Path | None = None
    limit: int | None = None
    """At most this many questions per task, sampled with `seed` (workflow/selection.py)."""
    seed: int = 1234
    concurrency: int = 16
    use_cache: bool = True
    cache_path: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    command: list[str] = field(default_factory=list)
    judge: str | list[str] | None = None
    """Model spec of the rubric judge, or several: a jury (used only when some task is
    judged). None: the recipe's `judges`, else the embedded default (workflow/eval_jury.py)."""
    jury: str = "median"
    """How a jury's totals make one score: median, mean or majority (judging/jury.py)."""
    allow_self_judge: bool = False
    """Let a named judge grade the answers of a model under test that it is (flagged)."""
    conditioning: str | None = None
    """How every minimal pair is scored (`spaced` or `bare`); None: as each task's items or
    the task itself say (pair_conditioning.py)."""
    pairs: str = "loglik"
    """How minimal pairs are asked: `loglik` (their log-probabilities compared) or `choice`
    (which sentence is acceptable, in both orders; pair_methods.py)."""
    pair_methods: dict[str, str] | None = None
    """Per minimal-pair task, its own method (`loglik`, `choice`, or `none`: left out), over
    `pairs`; a profile gives each model what it supports."""
    view: bool = True
    """Write the run viewer (`report.html` and `view/`) when the run ends."""
    resume_changed: ResumeChanged = "refuse"
    """On resuming a folder whose inputs changed under its answers: refuse, or ask again the
    answers the change touches (`reask`)."""


@dataclass
class EvalResult:
    """Where the run went and how it ended."""

    folder: Run
    manifest: EvalManifest

    @property
    def report_path(self) -> Path:
        """The run's `report.md`."""
        return self.folder.file("report.md")


class RecordWriter:
    """Appends an eval's records (failures apart) and keeps the running summary and counts."""

    def __init__(self, folder: Run) -> None:
        self.folder = folder
        self.summary = SummaryBuilder()
        self.scored: dict[tuple[str, str], bool] = {}
        """(model, item) to whether its answer was invalid, for every item done: those an
        earlier run of the folder left (what this run need not ask again) and this run's."""
        self.failed: set[tuple[str, str]] = set()
        """(model, item) whose request failed (or whose judge could not be reached) in this
        run: recorded, and asked again when the run is resumed."""
        self.written = 0

    def resume(self, stale: Stale | None = None) -> int:
        """Reconcile what an earlier run of this folder recorded (once).

        Returns how many lines were set aside.
        """
        reconciled = reconcile(self.folder, stale, self.summary.add)
        self.scored = reconciled.done
        return reconciled.set_aside

    def chunk(self, model: str) -> ChunkRecords:
        """A buffer for one chunk's records of `model`, appended together by its `commit`."""
        return ChunkRecords(self, model)


class ChunkRecords:
    """One chunk's records (all of one model) on their way to the run folder.

    Each record is serialised as it is added, so the record objects do not outlive their item
    (a chunk of kept records costs the eval more than their JSON lines, measured in
    bench/graph.py); `commit` appends the lines and only then counts the scores, so a run
    stopped in the middle of a chunk counts none of it.
    """

    def __init__(self, writer: RecordWriter, model: str) -> None:
        self.writer = writer
        self.model = model
        self.responses: list[str] = []
        self.failures: list[str] = []
        self.scores: list[str] = []
        self.entries: list[ScoreEntry] = []
        self.done: list[tuple[str, bool]] = []
        self.failed: list[str] = []

    def add(self, response: ResponseRecord, score: ScoreRecord | None = None) -> None:
        """One item's response (a failure goes to `failures.jsonl`) and its score, if any."""
        if response.error is not None:
            self.failures.append(response.model_dump_json())
        else:
            self.responses.append(response.model_dump_json())
        if score is not None:
            self.scores.append(score.model_dump_json())
            entry = self.writer.summary.entry(score)
            if entry is not None:
                self.entries.append(entry)
            self.done.append((score.item_id, score.invalid))
        else:
            self.failed.append(response.item_id)

    def commit(self) -> None:
        """Append the chunk's lines (flushed), then count its scores."""
        writer, folder = self.writer, self.writer.folder
        folder.appender(RESPONSES).append(self.responses)
        folder.appender(SCORES).append(self.scores)
        if self.failures:
            folder.appender(FAILURES).append(self.failures)
        writer.summary.add_entries(self.entries)
        for item_id, invalid in self.done:
            writer.scored[self.model, item_id] = invalid
        writer.failed.update((self.model, item_id) for item_id in self.failed)
        writer.written += len(self.responses) + len(self.scores)


async def run_eval(
    dataset_path: str | Path,
    options: EvalOptions,
    progress: ProgressSink | None = None,
) -> EvalResult:
    """Evaluate every model in `options` on a dataset; see the module docstring."""
    # The items, their rendered requests and the running summary live as long as the run:
    # the cyclic collector leaves them out of its walks (runtime/memory.py).
    opened: list[Backend] = []
    try:
        with long_lived():
            return await _run_eval(dataset_path, options, progress or SilentProgress(), opened)
    finally:
        for backend in opened:  # connections opened by a check, also when the run stops early
            await backend.aclose()


def _read(dataset_path: str | Path, options: EvalOptions) -> tuple[Dataset, Selection]:
    dataset = open_dataset(dataset_path, options.fmt)
    answers = AnswerFile(options.answers) if options.answers is not None else None
    selection = select_items(dataset, options.limit, options.seed, answers)  # one streamed pass
    if answers is not None:
        dataset.duplicates += answers.dropped
        dataset.digest = hashlib.sha256(
            (dataset.digest + file_hash(answers.path)).encode()
        ).hexdigest()
    if options.pairs != LOGLIK and options.conditioning is not None:
        raise GramagentsError(
            "--conditioning: minimal pairs asked as a forced choice (--pairs choice) compare no "
            "log-probabilities; leave it out"
        )
    default = check_pairs(options.pairs) if options.pair_methods is None else options.pairs
    selection = apply_pair_methods(selection, default, options.pair_methods)
    if not selection.items:
        raise NothingToAsk(f"{dataset.path}: no item is left to ask (minimal pairs left out)")
    selection.conditioning = pair_conditionings(
        dataset, selection.items, selection.tasks, selection.pair_tasks, options.conditioning
    )
    return dataset, selection


async def _open_backends(
    options: EvalOptions, selection: Selection, opened: list[Backend]
) -> list[Backend]:
    """The models' backends, checked (reachable, able to do what the tasks ask)."""
    settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
    backends = [create_backend(spec, settings) for spec in options.models]
    opened.extend(backends)
    labels = [b.spec.label for b in backends]
    if len(set(labels)) != len(labels):
        raise GramagentsError(f"--model: the same model is named twice ({', '.join(labels)})")
    pair_tasks = selection.pair_tasks
    for backend in backends:
        if pair_tasks and not backend.supports_loglikelihood:
            raise NoLoglikelihood(
                f"--model '{backend.spec.label}': {', '.join(pair_tasks)} compare log-likelihoods, "
                "which this backend does not give (local models and openai: servers with "
                "/v1/completions do); ask the pairs as a forced choice with --pairs choice"
            )
        await backend.check()
        if pair_tasks:
            await backend.check_loglikelihood()
    return backends


async def _setting(
    dataset: Dataset, selection: Selection, options: EvalOptions, opened: list[Backend]
) -> EvalSetting:
    """The models, templates, rubrics and judge of the run, checked."""
    backends = await _open_backends(options, selection, opened)
    rubrics = _rubrics(selection.rubrics)
    templates = dict(selection.templates)  # what the graph renders with, as the manifest hashes
    jury = None
    if rubrics:
        from ..judging.rubric import JUDGE_PROMPT

        settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
        specs, named = jury_specs(options.judge, dataset)
        jury = open_jury(specs, named, options.jury, backends, settings, options.allow_self_judge)
        opened.extend(jury.backends)
        templates[JUDGE_PROMPT] = load_prompt(JUDGE_PROMPT)
        for judge in jury.backends:
            await judge.check()
    return EvalSetting(dataset, selection, backends, templates, rubrics, jury)


def _item_inputs(setting: EvalSetting) -> ItemInputs:
    from ..judging.rubric import JUDGE_PROMPT

    return ItemInputs(
        setting.selection.items,
        setting.selection.tasks,
        {name: r.id for name, r in setting.rubrics.items()},
        JUDGE_PROMPT,
        setting.jury.labels if setting.jury is not None else [],
    )


async def _run_eval(
    dataset_path: str | Path, options: EvalOptions, progress: ProgressSink, opened: list[Backend]
) -> EvalResult:
    dataset, selection = _read(dataset_path, options)
    setting = await _setting(dataset, selection, options, opened)
    with Run.open(options.run_dir, "eval") as run:
        previous, changes, stale = check_resume(
            run, setting.inputs(), dataset.digest, _item_inputs(setting), options.resume_changed
        )
        manifest = eval_manifest(run, options, setting, previous, changes)
        writer = RecordWriter(run)
        # before the manifest changes: a failure here leaves consistent records and the
        # earlier manifest, with whatever the reconciliation set aside
        manifest.set_aside += writer.resume(stale)
        cache = open_cache(options.use_cache, options.cache_path)
        models = [Model(b, cache) for b in setting.backends]
        judges = [Model(b, cache) for b in setting.jury.backends] if setting.jury else []
        resumed = 0
        failure: BaseException | None = None
        try:
            run.write_manifest(manifest)
            resumed = await _evaluate(models, setting, writer, progress, judges, manifest)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            progress.stop()
            count(
                manifest, models, selection.items, resumed, (writer.scored, writer.failed), judges
            )
            try:
                run.settle(
                    manifest,
                    failure,
                    summary=writer.summary.summary(),
                    view=options.view,
                    items=selection.items,
                )
            finally:
                cache.close()
    return EvalResult(folder=run, manifest=manifest)


async def _evaluate(
    models: list[Model],
    setting: EvalSetting,
    writer: RecordWriter,
    progress: ProgressSink,
    judges: list[Model],
    manifest: EvalManifest,
) -> int:
    """Ask every model what it has not answered; returns how many answers were done before."""
    items, resumed = setting.selection.items, 0
    for model in models:
        STOP.check()  # stopped: the models not started are not asked (Interrupted)
        pending = (
            [i for i in items if (model.label, i.id) not in writer.scored]
            if writer.scored
            else items  # a fresh run: nothing to leave out
        )
        resumed += len(items) - len(pending)
        if not pending:
            continue
        context = EvalContext(
            model=model,
            tasks=setting.selection.tasks,
            records=writer.chunk,
            templates=setting.templates,
            judges=judges,
            jury=setting.jury.rule if setting.jury else "median",
            rubrics=setting.rubrics,
            conditioning=setting.selection.conditioning,
        )
        if model is not models[-1]:  # the last model's report is the run's, written when it settles
            context.report = lambda: run_reports.write_eval_report(
                writer.folder, manifest, writer.summary.summary()
            )
        await _evaluate_model(context, pending, progress)
    STOP.check()  # the graph recorded what was answered before the stop
    return resumed


async def _evaluate_model(
    context: EvalContext, pending: list[Item], progress: ProgressSink
) -> None:
    """Run one model's pending items through the eval graph, counting them as they are scored."""
    from .eval_graph import eval_graph  # langgraph: imported only when needed

    model, judges = context.model, context.judges
    judged = f", judged by {', '.join(j.label for j in judges)}" if judges else ""
    total = steps_of(pending, len(pending), context)
    progress.start(f"eval {model.label}{judged}", total)
    try:
        with collected_every(COLLECT_EVERY) as collect:

            def advance(count: int, **tallies: int) -> None:
                progress.advance(count, **tallies)
                collect(count)

            steps = Steps(advance, total)
            context.advance = steps.settle
            context.tally = lambda name, count: steps.arrive(count, **{name: count})
            await eval_graph().ainvoke(
                {"items": pending},
                config={
                    "configurable": {"eval": context},
                    "max_concurrency": MAX_CHUNKS_IN_FLIGHT,
                    "recursion_limit": 64,
                },
            )
    finally:
        await model.backend.aclose()


def _rubrics(names: list[str]) -> dict[str, Rubric]:
    """The rubrics the items' answers are judged with, by name (a broken one fails here)."""
    if not names:
        return {}  # nothing is judged: the rubric module is not even imported
    from ..judging.rubric import find_rubric

    return {name: find_rubric(name) for name in names}
