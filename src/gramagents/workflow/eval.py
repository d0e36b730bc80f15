"""`gramagents eval`: run models over a dataset into a run folder, resumably.

Everything a user can get wrong (dataset, formats, model specs, unreachable servers) is
checked before the run folder is made. A run folder that already holds an evaluation of the
same dataset is resumed: what has a score is not asked again, and answers whose score line was
lost to a kill are served from the response cache.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GramagentsError, RunError
from ..models import BackendSettings, Model, create_backend
from ..models.base import Backend
from ..progress import ProgressSink, SilentProgress
from ..records import Counts, Item, ResponseRecord, RunManifest, ScoreRecord
from ..report.runs import write_eval_report
from ..report.summary import ScoreEntry, SummaryBuilder
from ..resources import file_hash
from ..runtime.cache import NullCache, ResponseCache
from ..runtime.memory import collected_every, long_lived
from ..runtime.paths import default_cache_path
from ..runtime.retry import RetryPolicy
from ..runtime.rundir import RunFolder, iter_jsonl, now_iso, repair_jsonl
from ..sources.answers import AnswerFile
from ..sources.datasets import Dataset, open_dataset
from ..sources.duplicates import summary
from ..tasks import TaskSpec
from ..templates import PromptTemplate, load_prompt
from ..versions import package_versions
from .pair_conditioning import pair_conditionings
from .selection import Selection, select_items

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
    judge: str = "smollm2"
    """Model spec of the rubric judge (used only when some task is judged)."""
    conditioning: str | None = None
    """How every minimal pair is scored (`spaced` or `bare`); None: as each task's items or
    the task itself say (pair_conditioning.py)."""
    view: bool = True
    """Write the run viewer (`report.html` and `view/`) when the run ends."""


@dataclass
class EvalResult:
    """Where the run went and how it ended."""

    folder: RunFolder
    manifest: RunManifest

    @property
    def report_path(self) -> Path:
        """The run's `report.md`."""
        return self.folder.file("report.md")


class RecordWriter:
    """Appends an eval's records (failures apart) and keeps the running summary and counts."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder
        self.summary = SummaryBuilder()
        self.scored: dict[tuple[str, str], bool] = {}
        """(model, item) to whether its answer was invalid, for the score lines an earlier run
        of the folder left (what this run need not ask again)."""
        self.new_scores: Counter[str] = Counter()
        """Per model: score lines this run appended (never one of `scored`'s items)."""
        self.new_invalid: Counter[str] = Counter()
        """Per model: those of them whose answer was invalid."""
        self.orphans: set[tuple[str, str]] = set()
        """(model, item) pairs whose response line exists but whose score line was lost."""
        self.written = 0

    def resume(self) -> None:
        """Read what an earlier, interrupted run of this folder recorded (once)."""
        for name in ("responses.jsonl", "scores.jsonl", "failures.jsonl"):
            repair_jsonl(self.folder.file(name))  # cuts a partial last line left by a kill
        for record in iter_jsonl(self.folder.file("scores.jsonl")):
            self.scored[record["model"], record["item_id"]] = bool(record.get("invalid"))
            self.summary.add(record)
        answered = {
            (r["model"], r["item_id"]) for r in iter_jsonl(self.folder.file("responses.jsonl"))
        }
        self.orphans = answered - set(self.scored)

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
        self.invalid = 0

    def add(self, response: ResponseRecord, score: ScoreRecord | None = None) -> None:
        """One item's response (a failure goes to `failures.jsonl`) and its score, if any."""
        orphans = self.writer.orphans
        if response.error is not None:
            self.failures.append(response.model_dump_json())
        elif not (orphans and (self.model, response.item_id) in orphans):
            self.responses.append(response.model_dump_json())
        if score is not None:
            self.scores.append(score.model_dump_json())
            entry = self.writer.summary.entry(score)
            if entry is not None:
                self.entries.append(entry)
            self.invalid += score.invalid

    def commit(self) -> None:
        """Append the chunk's lines (flushed), then count its scores."""
        writer, folder = self.writer, self.writer.folder
        folder.appender("responses.jsonl").append(self.responses)
        folder.appender("scores.jsonl").append(self.scores)
        if self.failures:
            folder.appender("failures.jsonl").append(self.failures)
        writer.summary.add_entries(self.entries)
        writer.new_scores[self.model] += len(self.scores)
        writer.new_invalid[self.model] += self.invalid
        writer.written += len(self.responses) + len(self.scores)


def _check_resumable(
    folder: RunFolder, dataset: Dataset, conditioning: dict[str, str]
) -> RunManifest | None:
    previous = folder.read_manifest()
    if previous is None:
        return None
    if previous.kind != "eval":
        raise RunError(f"--run-dir {folder.path}: holds a {previous.kind} run, not an eval")
    if previous.hashes.get("dataset") != dataset.digest:
        raise RunError(
            f"--run-dir {folder.path}: holds an eval of a different dataset; use a new --run-dir"
        )
    changed = [t for t, c in conditioning.items() if previous.conditioning.get(t, c) != c]
    if changed:
        before = ", ".join(f"{t} {previous.conditioning[t]}" for t in changed)
        raise RunError(
            f"--run-dir {folder.path}: its minimal pairs were scored with another conditioning "
            f"({before}); use a new --run-dir"
        )
    return previous


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
            raise GramagentsError(
                f"--model '{backend.spec.label}': {', '.join(pair_tasks)} compare log-likelihoods, "
                "which this backend does not give (local models and openai: servers with "
                "/v1/completions do); leave those tasks out with another dataset, or use one"
            )
        await backend.check()
        if pair_tasks:
            await backend.check_loglikelihood()
    return backends


def _eval_manifest(
    folder: RunFolder,
    options: EvalOptions,
    dataset: Dataset,
    selection: Selection,
    labels: list[str],
    previous: RunManifest | None,
    templates: dict[str, PromptTemplate],
    judge: Model | None,
) -> RunManifest:
    return RunManifest(
        run_id=folder.run_id,
        kind="eval",
        command=options.command,
        recipe=dataset.info.get("recipe"),
        models=list(dict.fromkeys([*(previous.models if previous else []), *labels])),
        seed=options.seed,
        versions=package_versions(),
        hashes={
            "dataset": dataset.digest,
            **{f"prompts/{name}": template.hash for name, template in templates.items()},
        },
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
        conditioning=selection.conditioning,
        random_baselines=selection.random_baselines,
        no_gold=selection.no_gold,
        judge={"model": judge.label, "requests_sent": 0, "cache_hits": 0} if judge else None,
    )


async def _run_eval(
    dataset_path: str | Path, options: EvalOptions, progress: ProgressSink, opened: list[Backend]
) -> EvalResult:
    dataset, selection = _read(dataset_path, options)
    items, tasks = selection.items, selection.tasks
    backends = await _open_backends(options, selection, opened)
    folder = RunFolder.open(options.run_dir, "eval")
    try:
        previous = _check_resumable(folder, dataset, selection.conditioning)
    except GramagentsError:
        folder.discard()
        raise
    cache = (
        ResponseCache(options.cache_path or default_cache_path())
        if options.use_cache
        else NullCache()
    )
    models = [Model(b, cache) for b in backends]
    rubrics = _rubrics(selection.rubrics)
    templates = dict(selection.templates)  # what the graph renders with, as the manifest hashes it
    judge = None
    if rubrics:
        from ..judging.rubric import JUDGE_PROMPT

        settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
        judge = Model(create_backend(options.judge, settings), cache)
        templates[JUDGE_PROMPT] = load_prompt(JUDGE_PROMPT)
        opened.append(judge.backend)
        await judge.backend.check()
    labels = [b.spec.label for b in backends]
    manifest = _eval_manifest(
        folder, options, dataset, selection, labels, previous, templates, judge
    )
    manifest.hashes.update({f"rubrics/{r.id}": r.hash for r in rubrics.values()})
    folder.write_manifest(manifest)
    writer = RecordWriter(folder)
    writer.resume()
    resumed = 0
    failure: BaseException | None = None
    try:
        for model in models:
            pending = (
                [i for i in items if (model.label, i.id) not in writer.scored]
                if writer.scored
                else items  # a fresh run: nothing to leave out
            )
            resumed += len(items) - len(pending)
            if pending:
                await _evaluate_model(
                    model,
                    pending,
                    tasks,
                    writer,
                    progress,
                    # the last model's report is the run's, written once by _finish
                    None
                    if model is models[-1]
                    else lambda: write_eval_report(folder, manifest, writer.summary.summary()),
                    templates,
                    judge,
                    rubrics,
                    selection.conditioning,
                )
    except BaseException as exc:
        failure = exc
        raise
    finally:
        progress.stop()
        if isinstance(failure, GramagentsError) and folder.created and writer.written == 0:
            folder.discard()  # nothing was recorded: leave no folder behind
        else:
            # the viewer takes seconds on a large run: not when the run was stopped
            view = options.view and failure is None
            _finish(folder, manifest, models, items, resumed, writer, judge, view)
            folder.close()
        cache.close()
    return EvalResult(folder=folder, manifest=manifest)


async def _evaluate_model(
    model: Model,
    pending: list[Item],
    tasks: dict[str, TaskSpec],
    writer: RecordWriter,
    progress: ProgressSink,
    report: Callable[[], object] | None,
    templates: dict[str, PromptTemplate],
    judge: Model | None,
    rubrics: dict[str, Any] | None,
    conditioning: dict[str, str],
) -> None:
    from .eval_graph import EvalContext, eval_graph  # langgraph: imported only when needed

    progress.start(f"eval {model.label}", len(pending))
    try:
        with collected_every(COLLECT_EVERY) as collect:

            def advance(count: int) -> None:
                progress.advance(count)
                collect(count)

            context = EvalContext(
                model=model,
                tasks=tasks,
                records=writer.chunk,
                advance=advance,
                report=report,
                templates=templates,
                judge=judge,
                rubrics=rubrics or {},
                conditioning=conditioning,
            )
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


def _rubrics(names: list[str]) -> dict[str, Any]:
    """The rubrics the items' answers are judged with, by name (a broken one fails here)."""
    if not names:
        return {}  # nothing is judged: the rubric module is not even imported
    from ..judging.rubric import find_rubric

    return {name: find_rubric(name) for name in names}


def _finish(
    folder: RunFolder,
    manifest: RunManifest,
    models: list[Model],
    items: list[Item],
    resumed: int,
    writer: RecordWriter,
    judge: Model | None = None,
    view: bool = True,
) -> None:
    labels = {m.label for m in models}
    in_scope = len(labels) * len(items)
    # What this run scored is in scope by construction; what an earlier run left may not be
    # (another --limit), so only those lines are checked against the items.
    done = sum(writer.new_scores[label] for label in labels)
    invalid = sum(writer.new_invalid[label] for label in labels)
    if writer.scored:
        ids = {i.id for i in items}
        earlier = [
            bad for (label, item), bad in writer.scored.items() if label in labels and item in ids
        ]
        done += len(earlier)
        invalid += sum(earlier)
    manifest.counts = Counts(
        items=in_scope,
        requests_sent=sum(m.stats.requests_sent for m in models)
        + (judge.stats.requests_sent if judge else 0),
        cache_hits=sum(m.stats.cache_hits for m in models) + resumed,
        invalid=invalid,
        failed=in_scope - done,
    )
    if judge is not None:
        manifest.judge = {
            "model": judge.label,
            "requests_sent": judge.stats.requests_sent,
            "cache_hits": judge.stats.cache_hits,
        }
    manifest.status = "complete" if done == in_scope else "partial"
    manifest.finished = now_iso()
    summary, files = write_eval_report(folder, manifest, writer.summary.summary())
    folder.write_manifest(manifest)
    if view:
        from ..report.view import write_view

        # a folder this invocation made holds records of `items` only: no need to read the
        # dataset again for the viewer
        given = items if folder.created else None
        write_view([folder.path], summary=summary, sections=files, items=given)
