"""`gramagents profile`: build what a suite names, evaluate the models on it, profile them.

The profile's folder (a `Run` of kind `profile`) holds one build folder per build entry
(`builds/NAME`) and one eval folder per entry (`evals/NAME`), each the run folder its own
command would write, so each can be opened, viewed and resumed on its own. A build is re-run in
its folder as `gramagents build` re-runs one: the response cache asks nothing already answered,
and a folder built from another source, recipe or prompts is refused (one line); an eval is
resumed, so only what is missing is asked, and refuses a folder of another dataset. The
statistics (`profile.json`), `report.md` and the viewer page are written last, from the evals'
records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..progress import Labelled, SilentProgress
from ..records import ProfileManifest
from ..resources import file_hash
from ..runtime.run import Run
from ..versions import package_versions
from .compute import Settings, profile_data
from .scores import ItemScore, read_entry
from .suite import Entry, Suite, entry_error, load_suite

PROFILE_JSON = "profile.json"


@dataclass
class ProfileOptions:
    """Settings of one `gramagents profile` invocation."""

    suite: str
    models: list[str] = field(default_factory=lambda: ["smollm2"])
    sources: dict[str, Path] = field(default_factory=dict)
    """Entry name to the source or dataset the user gives (`--source ENTRY=PATH`)."""
    run_dir: Path | None = None
    limit: int | None = None
    """Questions per task of every entry (overrides the suite's `limit`)."""
    settings: Settings = field(default_factory=Settings)
    """How the statistics are drawn; its seed is also the evals' sampling seed."""
    agent_model: str | None = None
    judge: str = "smollm2"
    concurrency: int = 16
    use_cache: bool = True
    command: list[str] = field(default_factory=list)

    @property
    def seed(self) -> int:
        """The one seed of a profile: the evals' sampling and the bootstrap."""
        return self.settings.seed


@dataclass
class ProfileResult:
    """Where the profile went and what it holds."""

    folder: Run
    manifest: ProfileManifest
    data: dict[str, Any]


ProgressFactory = Any
"""`() -> ProgressSink`: a fresh progress display per build and eval."""


def plan(suite: Suite, suite_file: Path, options: ProfileOptions) -> dict[str, tuple[Entry, Path]]:
    """The entries to run with the source each reads; checked before any folder is opened."""
    unknown = sorted(set(options.sources) - set(suite.entries))
    if unknown:
        raise InputError(
            suite_file,
            f"--source {unknown[0]}=...: no such entry (entries: {', '.join(suite.entries)})",
        )
    planned: dict[str, tuple[Entry, Path]] = {}
    for name, entry in suite.entries.items():
        given = options.sources.get(name)
        location = given if given is not None else entry.location
        if location is None:
            if entry.optional:
                continue
            raise entry_error(
                suite_file,
                name,
                f"reads a source the suite leaves to you: give it with --source {name}=PATH",
            )
        path = Path(location)
        if not path.exists():
            if entry.optional and given is None:
                continue
            raise InputError(path, f"entry '{name}': no such file or folder")
        planned[name] = (entry, path)
    if not planned:
        raise InputError(suite_file, "no entry has a source to read")
    return planned


async def run_profile(
    options: ProfileOptions, progress: ProgressFactory = SilentProgress
) -> ProfileResult:
    """Profile the models on a suite; see the module docstring."""
    suite, suite_file = load_suite(options.suite)
    entries = plan(suite, suite_file, options)
    with Run.open(options.run_dir, "profile") as run:
        manifest = _manifest(run, suite, suite_file, options)
        run.write_manifest(manifest)
        try:
            job = _Job(run, options, progress, set(suite.competence_of()))
            for name, (entry, source) in entries.items():
                manifest.entries[name] = await _run_entry(job, name, entry, source)
                run.write_manifest(manifest)
                run.write_text("report.md", _interim(manifest))
            data = _profile(run, suite, entries, manifest, options)
            ended = {e.get("status") for e in manifest.entries.values()}
            manifest.status = "complete" if ended == {"complete"} else "partial"
            manifest.reason = None if manifest.status == "complete" else "an eval is partial"
            manifest.tasks = data.pop("tasks")
            manifest.models = data["models"]
            run.write_text(PROFILE_JSON, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
            run.finish(manifest)
        except BaseException as exc:
            if any(run.file(d).exists() for d in ("builds", "evals")):
                run.write_text("report.md", _interim(manifest))  # keep what the entries wrote
            run.settle(manifest, exc, view=False)
            raise
    return ProfileResult(run, manifest, data)


def _manifest(run: Run, suite: Suite, suite_file: Path, options: ProfileOptions) -> ProfileManifest:
    previous = run.found
    return ProfileManifest(
        run_id=run.run_id,
        command=options.command,
        models=list(options.models),
        seed=options.seed,
        versions=package_versions(),
        hashes={"suite": file_hash(suite_file)},
        started=previous.started if previous is not None else _now(),
        suite={"name": suite.suite, "file": str(suite_file), "competences": suite.competences},
        boot=options.settings.boot,
        entries=dict(previous.entries) if isinstance(previous, ProfileManifest) else {},
    )


def _interim(manifest: ProfileManifest) -> str:
    """`report.md` while entries run: what is done (the folder now holds their records)."""
    done = [f"- {name}: {e['eval']} ({e['status']})" for name, e in manifest.entries.items()]
    return "\n".join([f"# Profile {manifest.run_id} (running)", "", *done]) + "\n"


def _now() -> str:
    from ..runtime.rundir import now_iso

    return now_iso()


@dataclass
class _Job:
    """What every entry of one profile runs with."""

    run: Run
    options: ProfileOptions
    progress: Any
    tasks: set[str]
    """The tasks the suite's competences name: the only ones asked."""


async def _run_entry(job: _Job, name: str, entry: Entry, source: Path) -> dict[str, Any]:
    """Build (unless a complete build is there) and evaluate one entry."""
    run, options, progress, tasks = job.run, job.options, job.progress, job.tasks
    from ..workflow.eval import EvalOptions, run_eval

    record: dict[str, Any] = {
        "source": str(source),
        "points": entry.points or name,
        "point_key": entry.point_key,
    }
    target, fmt, answers = source, "gramagents", None
    if entry.build is not None:
        built = await _build(run.file(f"builds/{name}"), entry, source, options, progress)
        record["build"] = str(Path("builds") / name)
        target = _in_scope(run, name, built / "dataset.jsonl", tasks)
    else:
        assert entry.dataset is not None
        fmt = entry.dataset.format
        answers = Path(entry.dataset.answers) if entry.dataset.answers else None
    limit = options.limit if options.limit is not None else entry.limit
    eval_options = EvalOptions(
        models=list(options.models),
        fmt=fmt,
        answers=answers,
        run_dir=run.file(f"evals/{name}"),
        limit=limit,
        seed=options.seed,
        concurrency=options.concurrency,
        use_cache=options.use_cache,
        command=options.command,
        judge=options.judge,
    )
    result = await run_eval(target, eval_options, Labelled(progress(), name))
    record.update(
        eval=str(Path("evals") / name),
        limit=limit,
        status=result.manifest.status,
        models=list(result.manifest.models),
        tasks=dict(result.manifest.tasks),
        invalid=result.manifest.counts.invalid,
    )
    return record


def _in_scope(run: Run, name: str, dataset: Path, tasks: set[str]) -> Path:
    """The build's items of the suite's tasks, so that only they are asked.

    The build folder itself when it holds no others, else a copy of those items
    (`datasets/NAME.jsonl`).
    """
    lines = dataset.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line).get("task") in tasks]
    if len(kept) == len([line for line in lines if line.strip()]):
        return dataset.parent
    run.file("datasets").mkdir(exist_ok=True)
    run.write_text(f"datasets/{name}.jsonl", "".join(f"{line}\n" for line in kept))
    return run.file(f"datasets/{name}.jsonl")


async def _build(
    folder: Path, entry: Entry, source: Path, options: ProfileOptions, progress: Any
) -> Path:
    """The entry's build folder, built there (again) by `run_build`.

    Never reused on sight: `run_build` checks the folder's recorded inputs against this
    source, recipe and prompts and refuses a changed one, and a rebuild from the same inputs
    reads the agents' answers from the response cache.
    """
    from ..workflow.build import BuildOptions, run_build

    assert entry.build is not None
    build_options = BuildOptions(
        source=source,
        agents=entry.build.agents,
        agent_model=options.agent_model,
        run_dir=folder,
        limit=entry.build.limit,
        concurrency=options.concurrency,
        use_cache=options.use_cache,
        command=options.command,
    )
    await run_build(entry.build.recipe, build_options, Labelled(progress(), folder.name))
    return folder


def _profile(
    run: Run,
    suite: Suite,
    entries: dict[str, tuple[Entry, Path]],
    manifest: ProfileManifest,
    options: ProfileOptions,
) -> dict[str, Any]:
    manifest_entries = manifest.entries
    competence_of = suite.competence_of()
    rows: list[ItemScore] = []
    for name, (entry, _) in entries.items():
        namespace = entry.points or name
        rows += read_entry(
            run.file(f"evals/{name}"), name, namespace, set(competence_of), entry.point_key
        )
    labels = [m for e in manifest_entries.values() for m in e.get("models", [])]
    models = list(dict.fromkeys(labels))
    data = profile_data(rows, competence_of, list(suite.competences), options.settings, models)
    data["suite"] = {
        "name": suite.suite,
        "description": suite.description,
        "competences": suite.competences,
    }
    data["models"] = models
    data["entries"] = {
        name: {"points": e.points or name, "point_key": e.point_key}
        for name, (e, _) in entries.items()
    }
    items: dict[str, set[tuple[str, str]]] = {}
    for row in rows:
        items.setdefault(row.task, set()).add(row.key)
    data["tasks"] = {task: len(keys) for task, keys in sorted(items.items())}
    return data
