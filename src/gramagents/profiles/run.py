"""`gramagents profile`: build what a suite names, evaluate the models on it, profile them.

The profile's folder (a `Run` of kind `profile`) holds one build folder per build entry
(`builds/NAME`) and one eval folder per entry (`evals/NAME`), each the run folder its own
command would write; where the models ask minimal pairs by different methods
(profile/methods.py), each method has its own eval folder (`evals/NAME+choice` beside
`evals/NAME`), so each can be opened, viewed and resumed on its own. A build is re-run in
its folder as `gramagents build` re-runs one: the response cache asks nothing already answered,
and a folder built from another source, recipe or prompts is refused (one line); an eval is
resumed, so only what is missing is asked, and refuses a folder of another dataset or sample.
The statistics (`profile.json`), `report.md` and the viewer page are written last, from the
evals' records.

A resumed profile checks its suite file by content: another suite (or the same file edited) is
refused, or with `--resume-changed=reask` recorded in the manifest's `changes`, the entries it
no longer names left out, and each entry's build and eval resumed under the same option (what
changed under their records is made again). A profile that stops says so in its `report.md`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, NothingToAsk
from ..models.spec import spec_label
from ..progress import Labelled, SilentProgress
from ..records import InputChange, ProfileManifest
from ..report.mdtext import md_text
from ..resources import file_hash
from ..runtime.run import ResumeChanged, Run, describe_failure
from ..versions import package_versions
from ..workflow.pair_methods import NONE
from .compute import Settings, profile_data
from .methods import ModelMethods, choose, supported_methods
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
    judge: str | list[str] | None = None
    """The rubric judge, or several (a jury); None: the suite's `judges`, else the eval's
    default (workflow/eval_jury.py)."""
    jury: str = "median"
    allow_self_judge: bool = False
    concurrency: int = 16
    use_cache: bool = True
    command: list[str] = field(default_factory=list)
    resume_changed: ResumeChanged = "refuse"
    """On resuming a folder whose suite, or an entry's inputs, changed: refuse, or record the
    change and make again what it touches (`reask`)."""

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
    methods = await _methods(suite, options)
    with Run.open(options.run_dir, "profile") as run:
        changes = _suite_changes(run, suite_file, options.resume_changed)
        run.file(PROFILE_JSON).unlink(missing_ok=True)  # made again from the evals at the end
        manifest = _manifest(run, suite, suite_file, options)
        manifest.changes += changes
        run.write_manifest(manifest)
        try:
            judge = options.judge or list(suite.judges) or None
            job = _Job(run, options, progress, set(suite.competence_of()), methods, judge)
            for name, (entry, source) in entries.items():
                manifest.entries[name] = await _run_entry(job, name, entry, source)
                run.write_manifest(manifest)
                run.write_text("report.md", _interim(manifest))
            data = _profile(run, suite, entries, manifest, options)
            data["methods"] = {_label(spec): m.competences for spec, m in methods.items()}
            ended = {e.get("status") for e in manifest.entries.values()}
            manifest.status = "complete" if ended == {"complete"} else "partial"
            manifest.reason = None if manifest.status == "complete" else "an eval is partial"
            manifest.tasks = data.pop("tasks")
            manifest.models = data["models"]
            run.write_text(PROFILE_JSON, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
            run.finish(manifest)
        except BaseException as exc:
            if not run.created or any(run.file(d).exists() for d in ("builds", "evals")):
                # what the entries wrote, and why the profile stopped (not a "running" title)
                run.write_text("report.md", _interim(manifest, describe_failure(exc)))
            run.settle(manifest, exc, view=False)
            raise
    return ProfileResult(run, manifest, data)


def _suite_changes(run: Run, suite_file: Path, policy: ResumeChanged) -> list[InputChange]:
    """The change of the suite file under a resumed profile: refused, or (`reask`) recorded."""
    previous = run.found
    if not isinstance(previous, ProfileManifest) or "suite" not in previous.hashes:
        return []
    before, after = previous.hashes["suite"], file_hash(suite_file)
    if before == after:
        return []
    return run.check_changes({"suite": (before, after)}, None, policy)


def _manifest(run: Run, suite: Suite, suite_file: Path, options: ProfileOptions) -> ProfileManifest:
    previous = run.found
    kept = previous.entries if isinstance(previous, ProfileManifest) else {}
    return ProfileManifest(
        run_id=run.run_id,
        command=options.command,
        models=[spec_label(model) for model in options.models],  # named as when it ends
        seed=options.seed,
        versions=package_versions(),
        hashes={"suite": file_hash(suite_file)},
        started=previous.started if previous is not None else _now(),
        suite={
            "name": suite.suite,
            "file": str(suite_file),
            "competences": suite.counted(),
            "methods": suite.methods(),
        },
        boot=options.settings.boot,
        entries={name: e for name, e in kept.items() if name in suite.entries},
        changes=list(previous.changes) if previous is not None else [],
    )


def _interim(manifest: ProfileManifest, failure: str | None = None) -> str:
    """`report.md` while entries run (what is done), or of a profile that stopped (and why)."""
    title = md_text(manifest.run_id)
    done = [
        f"- {md_text(name)}: {md_text(', '.join(str(x['eval']) for x in e.get('evals', [e])))}"
        f" ({md_text(e['status'])})"
        for name, e in manifest.entries.items()
    ]
    if failure is None:
        return "\n".join([f"# Profile {title} (running)", "", *done]) + "\n"
    head = [f"# Profile {title} (failed)", "", f"Stopped before its statistics: {md_text(failure)}"]
    return "\n".join([*head, "", *done]) + "\n"


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
    methods: dict[str, ModelMethods]
    """Per model spec, how its minimal pairs are asked."""
    judge: str | list[str] | None = None
    """The judges of every eval: the command's, else the suite's (None: the eval's own)."""

    def groups(self) -> list[tuple[str, list[str], ModelMethods]]:
        """(folder suffix, model specs, methods) of the models that share an eval folder.

        Models whose minimal pairs are asked alike share one; where they differ, each method
        has its own folder (`+choice`; log-probabilities keep the plain name).
        """
        found: dict[tuple[tuple[str, str], ...], list[str]] = {}
        for spec in self.options.models:
            found.setdefault(self.methods[spec].key, []).append(spec)
        out: list[tuple[str, list[str], ModelMethods]] = []
        for specs in found.values():
            methods = self.methods[specs[0]]
            suffix = methods.folder_suffix() if len(found) > 1 else ""
            while any(suffix == taken for taken, _, _ in out):  # two groups, one suffix
                suffix += "+"
            out.append((suffix, specs, methods))
        return out


async def _methods(suite: Suite, options: ProfileOptions) -> dict[str, ModelMethods]:
    """Per model spec, how its minimal pairs are asked (probed only when the suite has some)."""
    if not suite.methods():
        return {spec: ModelMethods() for spec in options.models}
    from ..models import BackendSettings

    settings = BackendSettings(concurrency=options.concurrency)
    refused = await supported_methods(list(options.models), settings)
    return {spec: choose(suite, refused[spec]) for spec in options.models}


def _label(spec: str) -> str:
    from ..models.spec import parse_spec

    return parse_spec(spec).label


async def _run_entry(job: _Job, name: str, entry: Entry, source: Path) -> dict[str, Any]:
    """Build (unless a complete build is there) and evaluate one entry (once per method)."""
    run, options, progress, tasks = job.run, job.options, job.progress, job.tasks

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
    evals = []
    for suffix, specs, methods in job.groups():
        folder = str(Path("evals") / f"{name}{suffix}")
        evals.append(await _run_eval(job, folder, specs, methods, (target, fmt, answers, limit)))
    done = [e for e in evals if e["eval"] is not None]
    record.update(
        eval=done[0]["eval"] if done else None,
        evals=evals,
        limit=limit,
        status="complete" if all(e["status"] == "complete" for e in evals) else "partial",
        models=[m for e in done for m in e["models"]],
        tasks={t: n for e in done for t, n in e["tasks"].items()},
        invalid=sum(e["invalid"] for e in done),
    )
    return record


async def _run_eval(
    job: _Job, folder: str, specs: list[str], methods: ModelMethods, data: tuple[Any, ...]
) -> dict[str, Any]:
    """Evaluate some models on an entry's dataset (`data`: target, format, answers, limit)."""
    from ..workflow.eval import EvalOptions, run_eval

    target, fmt, answers, limit = data
    options = job.options
    eval_options = EvalOptions(
        models=list(specs),
        fmt=fmt,
        answers=answers,
        run_dir=job.run.file(folder),
        limit=limit,
        seed=options.seed,
        concurrency=options.concurrency,
        use_cache=options.use_cache,
        command=options.command,
        judge=job.judge,
        jury=options.jury,
        allow_self_judge=options.allow_self_judge,
        resume_changed=options.resume_changed,
        pairs=NONE if methods.tasks else "loglik",
        pair_methods=dict(methods.tasks) or None,
    )
    labels = [_label(spec) for spec in specs]
    try:
        result = await run_eval(
            target, eval_options, Labelled(job.progress(), folder.removeprefix("evals/"))
        )
    except NothingToAsk as exc:  # only minimal pairs, which no method of these models measures
        return {"eval": None, "models": labels, "status": "complete", "skipped": str(exc)}
    return {
        "eval": folder,
        "models": list(result.manifest.models),
        "pairs": dict(result.manifest.pairs),
        "status": result.manifest.status,
        "tasks": dict(result.manifest.tasks),
        "invalid": result.manifest.counts.invalid,
    }


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
        resume_changed=options.resume_changed,
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
        for done in manifest_entries[name].get("evals", []):
            if done["eval"] is None:
                continue
            rows += read_entry(
                run.file(done["eval"]),
                name,
                namespace,
                set(competence_of),
                entry.point_key,
                shown=done["eval"],
            )
    labels = [m for e in manifest_entries.values() for m in e.get("models", [])]
    models = list(dict.fromkeys(labels))
    data = profile_data(rows, competence_of, list(suite.competences), options.settings, models)
    data["suite"] = {
        "name": suite.suite,
        "description": suite.description,
        "competences": suite.counted(),
        "methods": suite.methods(),
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
