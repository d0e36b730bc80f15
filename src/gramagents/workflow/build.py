"""`gramagents build`: a source and a recipe in, a dataset run folder out, for every recipe.

The recipe, the source, the prompts and the agents' models are all checked before the run
folder is opened (a `Run`, runtime/run.py: locked while the build runs). Agent calls go
through the response cache, so re-running a build (with the same `--run-dir`, or another)
re-asks nothing that was answered. Re-running it in the same folder after the recipe, the
source, an agent's prompt or a model's endpoint changed is refused, or with
`--resume-changed=reask` builds anew under the new inputs (the cache asks only what changed)
and records the change. The dataset, the records and the review file are whole files,
written atomically at the end.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..agents import AgentContext, get_agent
from ..errors import RunError
from ..models import BackendSettings, Model, create_backend
from ..progress import ProgressSink, SilentProgress
from ..records import BuildManifest, Counts, GrammarPoint, InputChange, Instance, Item
from ..resources import file_hash
from ..runtime.cache import Cache, open_cache
from ..runtime.embeddings import Embedder
from ..runtime.retry import RetryPolicy
from ..runtime.run import ResumeChanged, Run
from ..runtime.rundir import iter_jsonl, now_iso
from ..sources import SOURCES, ReadOptions, SourceData, duplicates
from ..tasks.registry import BuildResources, get_builder
from ..templates import load_prompt
from ..versions import package_versions
from .build_graph import AgentStage, BuildContext, FilterStage, Stage, build_graph
from .nodes import FILTERS, BuildFailure, BuildView, NodeEnv, file_of
from .recipe import AgentNode, FilterNode, Recipe, agent_prompts, load_recipe
from .review import REVIEWS, ReviewJob, apply_decisions, read_review

MAX_AGENT_CALLS_IN_FLIGHT = 256
"""Agent tasks the graph runs at once; each model bounds (API) or batches (local) them."""


@dataclass
class BuildOptions:
    """Settings of one `gramagents build` invocation."""

    source: Path
    agents: bool = True
    agent_model: str | None = None
    run_dir: Path | None = None
    limit: int | None = None
    """Use only the first N units of the source (grammar points, items, trees...)."""
    seed: int | None = None
    """Defaults to the recipe's seed."""
    concurrency: int = 16
    use_cache: bool = True
    cache_path: Path | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    command: list[str] = field(default_factory=list)
    resume_changed: ResumeChanged = "refuse"
    """On re-running in a folder whose inputs changed: refuse, or build anew (`reask`)."""


@dataclass
class BuildResult:
    """Where the dataset went and what the build did."""

    folder: Run
    manifest: BuildManifest
    items: list[Item]
    records: list[BaseModel]

    @property
    def instances(self) -> list[Instance]:
        """The records that are sentences of grammar points."""
        return [r for r in self.records if isinstance(r, Instance)]

    @property
    def dataset_path(self) -> Path:
        """The run's `dataset.jsonl`."""
        return self.folder.file("dataset.jsonl")


def _agent_model(node: AgentNode, recipe: Recipe, options: BuildOptions) -> str:
    return options.agent_model or node.model or recipe.agents.model


def _stages(recipe: Recipe, options: BuildOptions, models: dict[str, Model]) -> list[Stage]:
    stages: list[Stage] = []
    for node in recipe.nodes:
        if isinstance(node, AgentNode):
            spec = get_agent(node.agent)
            assert spec is not None  # checked when the recipe was loaded
            agent_options = spec.options.model_validate(node.options)
            context = None
            if options.agents:
                context = AgentContext(
                    model=models[_agent_model(node, recipe, options)],
                    prompt=node.prompt,
                    params=node.params.gen_params(),
                    languages=tuple(recipe.languages),
                    max_reasks=recipe.agents.max_reasks
                    if node.max_reasks is None
                    else node.max_reasks,
                    options=agent_options,
                )
            stages.append(AgentStage(node.name, spec, agent_options, context))
        elif isinstance(node, FilterNode):
            fspec = FILTERS.get(node.filter)
            assert fspec is not None
            stages.append(FilterStage(node.name, fspec, fspec.options.model_validate(node.options)))
    return stages


def _wanted_models(recipe: Recipe, options: BuildOptions) -> set[str]:
    """Model specs the build will ask: the agents' and those its filters name."""
    if not options.agents:
        return set()
    wanted = {_agent_model(n, recipe, options) for n in recipe.agent_nodes}
    for node in recipe.filter_nodes:
        spec = FILTERS.get(node.filter)
        if spec is not None and spec.models is not None:
            wanted |= set(spec.models(spec.options.model_validate(node.options)))
    return wanted


def _read_source(recipe: Recipe, options: BuildOptions, seed: int) -> SourceData:
    reader = SOURCES.get(recipe.reader.reader)
    assert reader is not None  # checked when the recipe was loaded
    source = reader(
        Path(options.source), ReadOptions(options.limit, seed, dict(recipe.reader.options))
    )
    seen: set[str] = set()
    for record in source.records:
        key = record.id  # type: ignore[attr-defined]
        if key in seen:
            raise RunError(f"{options.source}: the reader made two records with id '{key}'")
        seen.add(key)
    return source


def _initial_state(source: SourceData) -> dict[str, Any]:
    state: dict[str, Any] = {
        "records": {r.id: r for r in source.records},  # type: ignore[attr-defined]
        "flags": {},
        "failures": [BuildFailure.of(source.stage, f) for f in source.failures],
    }
    if source.stats:
        state["tallies"] = {source.stage: dict(source.stats)}
    return state


async def run_build(
    recipe_name: str, options: BuildOptions, progress: ProgressSink | None = None
) -> BuildResult:
    """Build a dataset; see the module docstring."""
    progress = progress or SilentProgress()
    recipe, recipe_file = load_recipe(recipe_name)
    seed = options.seed if options.seed is not None else recipe.seed
    # No progress while the source is read: a bad source must say only its one error line,
    # however long reading took; the reader's counts are the first stage line.
    source = _read_source(recipe, options, seed)
    cache = open_cache(options.use_cache, options.cache_path)
    models: dict[str, Model] = {}
    try:
        settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
        for spec in sorted(_wanted_models(recipe, options)):
            models[spec] = Model(create_backend(spec, settings), cache)
        for model in models.values():
            await model.backend.check()
        job = _Build(recipe, recipe_file, options, seed, source, cache, models, progress)
        return await _build_in(Run.open(options.run_dir, "build"), job)
    finally:
        progress.stop()
        await _close(models, cache)


@dataclass
class _Build:
    """What one build runs with, gathered and checked before its folder is opened."""

    recipe: Recipe
    recipe_file: Path
    options: BuildOptions
    seed: int
    source: SourceData
    cache: Cache
    models: dict[str, Model]
    progress: ProgressSink


async def _build_in(run: Run, job: _Build) -> BuildResult:
    """Run the build graph in the opened folder, then finish it (or settle its failure)."""
    with run:
        manifest = _new_manifest(run, job)
        _check_resume(run, manifest, job.options.resume_changed)
        run.write_manifest(manifest)
        context = _build_context(job)
        try:
            state = await build_graph(context.stages, context.builder_name).ainvoke(
                _initial_state(job.source),
                config={
                    "configurable": {"build": context},
                    "recursion_limit": 16 + 4 * len(context.stages),
                    "max_concurrency": MAX_AGENT_CALLS_IN_FLIGHT,
                },
            )
            job.progress.stop()
            view = BuildView(state["records"], job.source.context, state.get("flags", {}))
            _count(manifest, job, state, view)
            run.write_text("recipe.yaml", job.recipe_file.read_text(encoding="utf-8"))
            if state.get("failures"):
                run.write_jsonl("failures.jsonl", [f.as_json() for f in state["failures"]])
            finish_build(run, manifest, job.recipe, view, state["items"])
        except BaseException as exc:
            run.settle(manifest, exc)
            raise
    return BuildResult(run, manifest, state["items"], list(view.records.values()))


def _count(manifest: BuildManifest, job: _Build, state: dict[str, Any], view: BuildView) -> None:
    failures = state.get("failures", [])
    source, models = job.source, job.models.values()
    counted = {source.stage, *(n.name for n in job.recipe.agent_nodes)}
    manifest.counts = Counts(
        requests_sent=sum(m.stats.requests_sent for m in models),
        cache_hits=sum(m.stats.cache_hits for m in models),
        failed=sum(1 for f in failures if f.stage in counted),
        shared=sum(m.stats.shared for m in models),
    )
    manifest.stages = state.get("tallies", {})
    manifest.flagged = len(view.flags)
    if source.warnings:
        manifest.artifacts = {**(manifest.artifacts or {}), "warnings": source.warnings[:200]}


def _check_resume(run: Run, manifest: BuildManifest, policy: ResumeChanged) -> None:
    """Refuse to build again in a folder whose inputs changed, unless `policy` is `reask`.

    With `reask` the change is recorded and the build made anew.
    """
    previous = run.found
    if previous is None:
        return
    assert isinstance(previous, BuildManifest)  # Run.open checked the kind
    before = {**previous.hashes, **{f"endpoint/{m}": e for m, e in previous.endpoints.items()}}
    after = {**manifest.hashes, **{f"endpoint/{m}": e for m, e in manifest.endpoints.items()}}
    changes = {k: (before[k], v) for k, v in after.items() if k in before and before[k] != v}
    recorded: list[InputChange] = run.check_changes(changes, None, policy)
    manifest.changes = [*previous.changes, *recorded]


async def _close(models: dict[str, Model], cache: Cache) -> None:
    for model in models.values():
        await model.backend.aclose()
    cache.close()


def _new_manifest(run: Run, job: _Build) -> BuildManifest:
    recipe, options, source, models = job.recipe, job.options, job.source, job.models
    described: dict[str, Any] = {"path": str(options.source), **source.info}
    if source.files:
        described["files"] = source.files
    described["duplicates"] = duplicates.summary(source.duplicates)
    from .eval_resume import endpoint_text

    return BuildManifest(
        run_id=run.run_id,
        command=options.command,
        recipe=recipe.recipe,
        models=sorted({m.label for m in models.values()}),
        endpoints={m.label: endpoint_text(m.backend.spec.endpoint) for m in models.values()},
        seed=job.seed,
        versions=package_versions(),
        hashes={
            "recipe": file_hash(job.recipe_file),
            "source": source_digest(source.location or Path(options.source)),
            **_agent_prompt_hashes(recipe),
        },
        started=now_iso(),
        source=described,
        agents="on" if options.agents else "off",
    )


def _build_context(job: _Build) -> BuildContext:
    recipe, options, seed, models = job.recipe, job.options, job.seed, job.models
    builder = get_builder(recipe.builder.builder)
    assert builder is not None  # checked when the recipe was loaded
    tasks = {
        name: builder.task_params[name].model_validate(params or {})
        for name, params in recipe.builder.tasks.items()
    }
    embed = Embedder(job.cache).embed
    return BuildContext(
        stages=_stages(recipe, options, models),
        builder_name=recipe.builder.name,
        builder=builder,
        builder_options=builder.options.model_validate(recipe.builder.options),
        tasks=tasks,
        resources=BuildResources(seed=seed, embed=embed),
        env=NodeEnv(agents_on=options.agents, seed=seed, embed=embed, models=models),
        source_context=job.source.context,
        progress=job.progress,
    )


def _record_files(view: BuildView) -> dict[str, list[BaseModel]]:
    """The build's records and the reader's context entries, by the file they are kept in."""
    files: dict[str, list[BaseModel]] = {}
    for value in view.context.values():
        entries = list(value.values()) if isinstance(value, dict) else value
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, BaseModel):
                files.setdefault(file_of(entry), []).append(entry)
    for record in view.records.values():
        files.setdefault(file_of(record), []).append(record)
    return files


def finish_build(
    folder: Run, manifest: BuildManifest, recipe: Recipe, view: BuildView, items: list[Item]
) -> None:
    """Write a build's records, dataset, extra files and review file, then finish the run.

    Finishing writes the report, the manifest and the viewer (`Run.finish`).
    """
    for name, records in _record_files(view).items():
        folder.write_jsonl(name, records)
    folder.write_jsonl("dataset.jsonl", items)
    builder = get_builder(recipe.builder.builder)
    if builder is not None and builder.artifacts is not None:
        made = builder.artifacts(folder.path, view, items)
        manifest.artifacts = {**(manifest.artifacts or {}), **made}
    review = REVIEWS.get(recipe.review.kind)
    assert review is not None  # checked when the recipe was loaded
    written = review.write(folder.path, view, recipe.review, manifest.seed)
    if written is not None:
        manifest.review = {**(manifest.review or {}), **written}
    manifest.counts = manifest.counts.model_copy(update={"items": len(items)})
    manifest.hashes.update(_prompt_hashes(recipe, items))
    manifest.hashes["dataset"] = _sha256(folder.file("dataset.jsonl"))
    manifest.tasks = dict(Counter(i.task for i in items))
    manifest.status = "complete"
    folder.finish(manifest)


def _prompt_hashes(recipe: Recipe, items: list[Item]) -> dict[str, str]:
    names = {i.prompt.template for i in items}
    return {
        **{f"prompts/{n}": load_prompt(n).hash for n in sorted(names)},
        **_agent_prompt_hashes(recipe),
    }


def _agent_prompt_hashes(recipe: Recipe) -> dict[str, str]:
    """The hashes of the prompts the recipe's agents are asked with."""
    names: set[str] = set()
    for node in recipe.agent_nodes:
        names |= set(agent_prompts(node, recipe.languages).values())
    return {f"prompts/{n}": load_prompt(n).hash for n in sorted(names)}


def import_review(
    run_dir: Path,
    review_file: Path,
    reviewer: str = "reviewer",
    cache_path: Path | None = None,
    use_cache: bool = True,
) -> BuildResult:
    """Apply a reviewed file to a build run, as its recipe's review kind says.

    The review kind's `apply` ends with `Run.finish`, as a build does; a review that fails
    after it rewrote records leaves the run `partial` with the reason.
    """
    with Run.existing(run_dir, kind="build") as folder:
        manifest = folder.found
        assert isinstance(manifest, BuildManifest)
        if not folder.file("recipe.yaml").is_file():
            raise RunError(f"{run_dir}: no recipe.yaml (was it built by this version?)")
        recipe, _ = load_recipe(str(folder.file("recipe.yaml")))
        spec = REVIEWS.get(recipe.review.kind)
        assert spec is not None  # checked when the recipe was loaded
        job = ReviewJob(
            folder, manifest, recipe, Path(review_file), reviewer, cache_path, use_cache
        )
        try:
            return spec.apply(job)
        except BaseException as exc:
            if folder.durable:
                folder.settle(manifest, exc)
            raise


def apply_instance_review(job: ReviewJob) -> BuildResult:
    """Apply decisions on generated sentences, then rebuild the banks (workflow/review.py)."""
    folder = job.folder
    for name in ("points.jsonl", "instances.jsonl"):
        if not folder.file(name).is_file():
            raise RunError(f"{folder.path}: no {name} (was it built by this version?)")
    points = [GrammarPoint.model_validate(r) for r in iter_jsonl(folder.file("points.jsonl"))]
    instances = {
        r["id"]: Instance.model_validate(r) for r in iter_jsonl(folder.file("instances.jsonl"))
    }
    generated = {i: instance for i, instance in instances.items() if instance.origin == "agent"}
    applied = apply_decisions(instances, read_review(job.file, generated), job.reviewer)
    view = BuildView(dict(instances), {"points": {p.id: p for p in points}})
    items = rebuild_banks(job, view)
    job.manifest.review = {
        **(job.manifest.review or {}),
        "imported_from": str(job.file),
        "decisions": applied,
    }
    finish_build(folder, job.manifest, job.recipe, view, items)
    return BuildResult(folder, job.manifest, items, list(view.records.values()))


def rebuild_banks(job: ReviewJob, view: BuildView) -> list[Item]:
    """The recipe's banks from `view`, as the build made them."""
    recipe = job.recipe
    builder = get_builder(recipe.builder.builder)
    assert builder is not None
    cache = open_cache(job.use_cache, job.cache_path)
    try:
        tasks = {
            name: builder.task_params[name].model_validate(params or {})
            for name, params in recipe.builder.tasks.items()
        }
        options = builder.options.model_validate(recipe.builder.options)
        resources = BuildResources(seed=job.manifest.seed, embed=Embedder(cache).embed)
        return builder.build(view, tasks, options, resources)
    finally:
        cache.close()


def source_digest(path: Path) -> str:
    """sha256 of a source file, or of every file under a source folder (names and bytes)."""
    if not path.is_dir():
        return _sha256(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode("utf-8") + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
