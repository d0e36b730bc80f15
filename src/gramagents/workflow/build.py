"""`gramagents build`: a source and a recipe in, a dataset run folder out, for every recipe.

The recipe, the source, the prompts and the agents' models are all checked before the run
folder is made. Agent calls go through the response cache, so re-running a build (with the
same `--run-dir`, or another) re-asks nothing that was answered. The dataset, the records and
the review file are whole files, written atomically at the end.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..agents import AgentContext, get_agent
from ..errors import GramagentsError, RunError
from ..models import BackendSettings, Model, create_backend
from ..progress import ProgressSink, SilentProgress
from ..records import Counts, GrammarPoint, Instance, Item, RunManifest
from ..report.build import render_build_report
from ..resources import file_hash
from ..runtime.cache import Cache, NullCache, ResponseCache
from ..runtime.embeddings import Embedder
from ..runtime.paths import default_cache_path
from ..runtime.retry import RetryPolicy
from ..runtime.rundir import RunFolder, iter_jsonl, now_iso, write_atomic, write_jsonl_atomic
from ..sources import SOURCES, ReadOptions, SourceData, duplicates
from ..tasks.registry import BuildResources, get_builder
from ..templates import load_prompt
from ..versions import package_versions
from .build_graph import AgentStage, BuildContext, FilterStage, Stage, build_graph
from .nodes import FILTERS, BuildView, NodeEnv, file_of
from .recipe import AgentNode, FilterNode, Recipe, load_recipe
from .review import REVIEWS, apply_decisions, read_review

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


@dataclass
class BuildResult:
    """Where the dataset went and what the build did."""

    folder: RunFolder
    manifest: RunManifest
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
        "failures": [{"stage": source.stage, **f} for f in source.failures],
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
    source = _read_source(recipe, options, seed)
    cache: Cache = (
        ResponseCache(options.cache_path or default_cache_path())
        if options.use_cache
        else NullCache()
    )
    models: dict[str, Model] = {}
    try:
        settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
        for spec in sorted(_wanted_models(recipe, options)):
            models[spec] = Model(create_backend(spec, settings), cache)
        for model in models.values():
            await model.backend.check()
        folder = _open_folder(options.run_dir)
    except BaseException:
        await _close(models, cache)
        raise
    labels = sorted(m.label for m in models.values())  # specs as written: credentials masked
    manifest = _new_manifest(folder, recipe, recipe_file, options, seed, source, labels)
    folder.write_manifest(manifest)
    context = _build_context(recipe, options, seed, cache, models, source, progress)
    try:
        state = await build_graph(context.stages, context.builder_name).ainvoke(
            _initial_state(source),
            config={
                "configurable": {"build": context},
                "recursion_limit": 16 + 4 * len(context.stages),
                "max_concurrency": MAX_AGENT_CALLS_IN_FLIGHT,
            },
        )
    except GramagentsError:
        if folder.created:
            folder.discard()  # the build never produced anything
        raise
    finally:
        progress.stop()
        await _close(models, cache)
    view = BuildView(state["records"], source.context, state.get("flags", {}))
    failures = state.get("failures", [])
    counted = {source.stage, *(n.name for n in recipe.agent_nodes)}
    manifest.counts = Counts(
        requests_sent=sum(m.stats.requests_sent for m in models.values()),
        cache_hits=sum(m.stats.cache_hits for m in models.values()),
        failed=sum(1 for f in failures if f.get("stage") in counted),
    )
    manifest.stages = state.get("tallies", {})
    if source.warnings:
        manifest.artifacts = {**(manifest.artifacts or {}), "warnings": source.warnings[:200]}
    write_atomic(folder.file("recipe.yaml"), recipe_file.read_text(encoding="utf-8"))
    if failures:
        write_jsonl_atomic(folder.file("failures.jsonl"), failures)
    finish_build(folder, manifest, recipe, view, state["items"])
    folder.close()
    return BuildResult(folder, manifest, state["items"], list(view.records.values()))


def _open_folder(run_dir: Path | None) -> RunFolder:
    folder = RunFolder.open(run_dir, "build")
    previous = folder.read_manifest()
    if previous is not None and previous.kind != "build":
        folder.close()
        raise RunError(f"--run-dir {folder.path}: holds a {previous.kind} run, not a build")
    return folder


async def _close(models: dict[str, Model], cache: Cache) -> None:
    for model in models.values():
        await model.backend.aclose()
    cache.close()


def _new_manifest(
    folder: RunFolder,
    recipe: Recipe,
    recipe_file: Path,
    options: BuildOptions,
    seed: int,
    source: SourceData,
    models: list[str],
) -> RunManifest:
    described: dict[str, Any] = {"path": str(options.source), **source.info}
    if source.files:
        described["files"] = source.files
    described["duplicates"] = duplicates.summary(source.duplicates)
    return RunManifest(
        run_id=folder.run_id,
        kind="build",
        command=options.command,
        recipe=recipe.recipe,
        models=models,
        seed=seed,
        versions=package_versions(),
        hashes={
            "recipe": file_hash(recipe_file),
            "source": source_digest(source.location or Path(options.source)),
        },
        started=now_iso(),
        source=described,
        agents="on" if options.agents else "off",
    )


def _build_context(
    recipe: Recipe,
    options: BuildOptions,
    seed: int,
    cache: Cache,
    models: dict[str, Model],
    source: SourceData,
    progress: ProgressSink,
) -> BuildContext:
    builder = get_builder(recipe.builder.builder)
    assert builder is not None  # checked when the recipe was loaded
    tasks = {
        name: builder.task_params[name].model_validate(params or {})
        for name, params in recipe.builder.tasks.items()
    }
    embed = Embedder(cache).embed
    return BuildContext(
        stages=_stages(recipe, options, models),
        builder_name=recipe.builder.name,
        builder=builder,
        builder_options=builder.options.model_validate(recipe.builder.options),
        tasks=tasks,
        resources=BuildResources(seed=seed, embed=embed),
        env=NodeEnv(agents_on=options.agents, seed=seed, embed=embed, models=models),
        source_context=source.context,
        progress=progress,
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
    folder: RunFolder, manifest: RunManifest, recipe: Recipe, view: BuildView, items: list[Item]
) -> None:
    """Write a build's records, dataset, extra files, review file, report and manifest."""
    for name, records in _record_files(view).items():
        write_jsonl_atomic(folder.file(name), records)
    write_jsonl_atomic(folder.file("dataset.jsonl"), items)
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
    manifest.finished = now_iso()
    write_atomic(folder.file("report.md"), render_build_report(manifest, view))
    folder.write_manifest(manifest)
    from ..report.view import write_view

    write_view([folder.path])


def _prompt_hashes(recipe: Recipe, items: list[Item]) -> dict[str, str]:
    names = {i.prompt.template for i in items}
    for node in recipe.agent_nodes:
        languages = ("zh", "en") if "{language}" in node.prompt else ("en",)
        names |= {node.prompt.format(language=lang) for lang in languages}
    return {f"prompts/{n}": load_prompt(n).hash for n in sorted(names)}


@dataclass
class ReviewJob:
    """What applying a review file needs."""

    folder: RunFolder
    manifest: RunManifest
    recipe: Recipe
    file: Path
    reviewer: str
    cache_path: Path | None = None
    use_cache: bool = True


def import_review(
    run_dir: Path,
    review_file: Path,
    reviewer: str = "reviewer",
    cache_path: Path | None = None,
    use_cache: bool = True,
) -> BuildResult:
    """Apply a reviewed file to a build run, as its recipe's review kind says."""
    folder = RunFolder(Path(run_dir), created=False)
    manifest = folder.read_manifest()
    if manifest is None or manifest.kind != "build":
        raise RunError(f"{run_dir}: not a build run folder")
    if not folder.file("recipe.yaml").is_file():
        raise RunError(f"{run_dir}: no recipe.yaml (was it built by this version?)")
    recipe, _ = load_recipe(str(folder.file("recipe.yaml")))
    spec = REVIEWS.get(recipe.review.kind)
    assert spec is not None  # checked when the recipe was loaded
    job = ReviewJob(folder, manifest, recipe, Path(review_file), reviewer, cache_path, use_cache)
    return spec.apply(job)  # type: ignore[no-any-return]


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
    cache: Cache = (
        ResponseCache(job.cache_path or default_cache_path()) if job.use_cache else NullCache()
    )
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
