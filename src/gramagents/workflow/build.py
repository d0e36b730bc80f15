"""`gramagents build`: a grammar source and a recipe in, a dataset run folder out.

The recipe, the source table, the prompts and the agents' models are all checked before the
run folder is made. Agent calls go through the response cache, so re-running a build (with the
same `--run-dir`, or another) re-asks nothing that was answered. The dataset and the instance
log are whole files, written atomically at the end.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from ..agents import AgentContext, get_agent
from ..errors import GramagentsError, RunError
from ..models import BackendSettings, Model, create_backend
from ..progress import ProgressSink, SilentProgress
from ..records import Counts, GrammarPoint, Instance, Item, RunManifest
from ..resources import file_hash, find
from ..runtime.cache import Cache, NullCache, ResponseCache
from ..runtime.embeddings import Embedder
from ..runtime.paths import default_cache_path
from ..runtime.retry import RetryPolicy
from ..runtime.rundir import RunFolder, iter_jsonl, now_iso, write_atomic, write_jsonl_atomic
from ..sources import SOURCES
from ..tasks.registry import BankBuilderSpec, BuildResources, get_builder
from ..versions import package_versions
from .build_graph import AgentStage, BuildContext, build_graph
from .recipe import Recipe, load_recipe, recipe_path, recipe_source
from .review import apply_decisions, read_review, review_queue, write_review

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
    """Use only the first N grammar points of the source."""
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
    instances: list[Instance]

    @property
    def dataset_path(self) -> Path:
        """The run's `dataset.jsonl`."""
        return self.folder.file("dataset.jsonl")


def _stages(recipe: Recipe, options: BuildOptions, models: dict[str, Model]) -> list[AgentStage]:
    stages = []
    for node in recipe.agent_nodes:
        spec = get_agent(node.agent)
        assert spec is not None  # checked when the recipe was loaded
        model_spec = options.agent_model or node.model or recipe.agents.model
        stages.append(
            AgentStage(
                name=node.name,
                spec=spec,
                context=AgentContext(
                    model=models[model_spec],
                    prompt=node.prompt,
                    params=node.params.gen_params(),
                    max_reasks=node.max_reasks
                    if node.max_reasks is not None
                    else recipe.agents.max_reasks,
                    options=spec.options.model_validate(node.options),
                ),
            )
        )
    return stages


def _prompt_hashes(recipe: Recipe, items: list[Item]) -> dict[str, str]:
    names = {t for i in items for t in [i.prompt.template]}
    for node in recipe.agent_nodes:
        languages = ("zh", "en") if "{language}" in node.prompt else ("en",)
        names |= {node.prompt.format(language=lang) for lang in languages}
    return {f"prompts/{n}": file_hash(find("prompts", n)) for n in sorted(names)}


def _bank_inputs(
    recipe: Recipe, seed: int, cache: Cache
) -> tuple[BankBuilderSpec, BaseModel, dict[str, BaseModel], BuildResources]:
    builder = get_builder(recipe.builder.builder)
    assert builder is not None  # checked when the recipe was loaded
    tasks = {
        name: builder.task_params[name].model_validate(params or {})
        for name, params in recipe.builder.tasks.items()
    }
    options = builder.options.model_validate(recipe.builder.options)
    return builder, options, tasks, BuildResources(seed=seed, embed=Embedder(cache).embed)


async def run_build(
    recipe_name: str, options: BuildOptions, progress: ProgressSink | None = None
) -> BuildResult:
    """Build a dataset; see the module docstring."""
    progress = progress or SilentProgress()
    path = recipe_path(recipe_name)
    if recipe_source(path) == "edueval":  # exam items, not a grammar source: its own pipeline
        from .edu_build import run_edu_build  # noqa: I001 - replaced by the shared graph

        return await run_edu_build(path, options, progress)  # type: ignore[return-value]
    recipe, recipe_path_ = load_recipe(recipe_name)
    reader = SOURCES.get(recipe.source)
    assert reader is not None  # checked when the recipe was loaded
    points = reader(options.source)
    if options.limit is not None:
        points = points[: options.limit]
    seed = options.seed if options.seed is not None else recipe.seed

    settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
    cache: Cache = (
        ResponseCache(options.cache_path or default_cache_path())
        if options.use_cache
        else NullCache()
    )
    models: dict[str, Model] = {}
    if options.agents:
        wanted = {options.agent_model or n.model or recipe.agents.model for n in recipe.agent_nodes}
        for spec in sorted(wanted):
            models[spec] = Model(create_backend(spec, settings), cache)
        for model in models.values():
            await model.backend.check()
    stages = _stages(recipe, options, models) if options.agents else []

    folder = RunFolder.open(options.run_dir, "build")
    previous = folder.read_manifest()
    if previous is not None and previous.kind != "build":
        folder.close()
        cache.close()
        raise RunError(f"--run-dir {folder.path}: holds a {previous.kind} run, not a build")
    manifest = RunManifest(
        run_id=folder.run_id,
        kind="build",
        command=options.command,
        recipe=recipe.recipe,
        models=sorted(models),
        seed=seed,
        versions=package_versions(),
        hashes={"recipe": file_hash(recipe_path_), "source": _sha256(options.source)},
        started=now_iso(),
        source={"path": str(options.source), "points": len(points)},
        agents="on" if options.agents else "off",
    )
    folder.write_manifest(manifest)
    builder, builder_options, tasks, resources = _bank_inputs(recipe, seed, cache)
    context = BuildContext(
        stages=stages,
        builder=builder,
        builder_options=builder_options,
        tasks=tasks,
        resources=resources,
        progress=progress,
    )
    try:
        state = await build_graph(stages).ainvoke(
            {"points": {p.id: p for p in points}},
            config={
                "configurable": {"build": context},
                "recursion_limit": 64,
                "max_concurrency": MAX_AGENT_CALLS_IN_FLIGHT,
            },
        )
    except GramagentsError:
        if folder.created:
            folder.discard()  # the build never produced anything
        raise
    finally:
        progress.stop()
        for model in models.values():
            await model.backend.aclose()
        cache.close()

    instances = list(state["instances"].values())
    tallies = state.get("tallies", {})
    manifest.counts = Counts(
        requests_sent=sum(m.stats.requests_sent for m in models.values()),
        cache_hits=sum(m.stats.cache_hits for m in models.values()),
        failed=sum(counts.get("failed", 0) for counts in tallies.values()),
    )
    manifest.stages = tallies
    write_atomic(folder.file("recipe.yaml"), recipe_path_.read_text(encoding="utf-8"))
    write_jsonl_atomic(folder.file("points.jsonl"), points)
    if state.get("failures"):
        write_jsonl_atomic(folder.file("failures.jsonl"), state["failures"])
    finish_build(folder, manifest, recipe, points, instances, state["items"])
    folder.close()
    return BuildResult(folder=folder, manifest=manifest, items=state["items"], instances=instances)


def finish_build(
    folder: RunFolder,
    manifest: RunManifest,
    recipe: Recipe,
    points: list[GrammarPoint],
    instances: list[Instance],
    items: list[Item],
) -> None:
    """Write a build's dataset, instances, review file, report and manifest."""
    write_jsonl_atomic(folder.file("instances.jsonl"), instances)
    write_jsonl_atomic(folder.file("dataset.jsonl"), items)
    builder = get_builder(recipe.builder.builder)
    if builder is not None and builder.artifacts is not None:
        manifest.artifacts = builder.artifacts(folder.path, points, instances, items)
    review_name = f"review.{recipe.review.format}"
    queue = review_queue(instances, recipe.review.sample, manifest.seed)
    if queue or folder.file(review_name).exists():
        rows = write_review(folder.file(review_name), queue, {p.id: p for p in points})
        manifest.review = {**(manifest.review or {}), "file": review_name, "rows": rows}
    manifest.counts = manifest.counts.model_copy(update={"items": len(items)})
    manifest.hashes.update(_prompt_hashes(recipe, items))
    manifest.hashes["dataset"] = _sha256(folder.file("dataset.jsonl"))
    manifest.tasks = dict(Counter(i.task for i in items))
    manifest.status = "complete"
    manifest.finished = now_iso()
    write_atomic(folder.file("report.md"), render_build_report(manifest, instances))
    folder.write_manifest(manifest)


def import_review(
    run_dir: Path,
    review_file: Path,
    reviewer: str = "reviewer",
    cache_path: Path | None = None,
    use_cache: bool = True,
) -> BuildResult:
    """Apply a reviewed file to a build run and rebuild its banks (see workflow/review.py)."""
    folder = RunFolder(Path(run_dir), created=False)
    manifest = folder.read_manifest()
    if manifest is None or manifest.kind != "build":
        raise RunError(f"{run_dir}: not a build run folder")
    for name in ("recipe.yaml", "points.jsonl", "instances.jsonl"):
        if not folder.file(name).is_file():
            raise RunError(f"{run_dir}: no {name} (was it built by this version?)")
    recipe, _ = load_recipe(str(folder.file("recipe.yaml")))
    points = [GrammarPoint.model_validate(r) for r in iter_jsonl(folder.file("points.jsonl"))]
    instances = {
        r["id"]: Instance.model_validate(r) for r in iter_jsonl(folder.file("instances.jsonl"))
    }
    generated = {i: instance for i, instance in instances.items() if instance.origin == "agent"}
    decisions = read_review(Path(review_file), generated)
    applied = apply_decisions(instances, decisions, reviewer)
    cache: Cache = ResponseCache(cache_path or default_cache_path()) if use_cache else NullCache()
    try:
        builder, options, tasks, resources = _bank_inputs(recipe, manifest.seed, cache)
        items = builder.build(points, instances.values(), tasks, options, resources)
    finally:
        cache.close()
    manifest.review = {
        **(manifest.review or {}),
        "imported_from": str(review_file),
        "decisions": applied,
    }
    finish_build(folder, manifest, recipe, points, list(instances.values()), items)
    return BuildResult(
        folder=folder, manifest=manifest, items=items, instances=list(instances.values())
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def render_build_report(manifest: RunManifest, instances: list[Instance]) -> str:
    """`report.md` of a build: banks, agent outcomes and where to look next."""
    source = manifest.source or {}
    lines = [
        f"# Build report: {manifest.run_id}",
        "",
        f"- recipe: {manifest.recipe}; source `{source.get('path')}` "
        f"({source.get('points')} grammar points)",
        f"- agents: {manifest.agents}"
        + (f" ({', '.join(manifest.models)})" if manifest.models else ""),
        f"- {manifest.counts.requests_sent} requests sent, {manifest.counts.cache_hits} "
        f"cache hits, {manifest.counts.failed} agent failures",
        "",
        "## Banks",
        "",
        "| task | items |",
        "|---|---|",
    ]
    lines += [f"| {task} | {n} |" for task, n in manifest.tasks.items()]
    stages = manifest.stages
    if stages:
        outcomes = sorted({o for counts in stages.values() for o in counts})
        lines += [
            "",
            "## Agent stages",
            "",
            "| stage | " + " | ".join(outcomes) + " |",
            "|---|" + "---|" * len(outcomes),
        ]
        for stage, counts in stages.items():
            lines.append(
                f"| {stage} | " + " | ".join(str(counts.get(o, 0)) for o in outcomes) + " |"
            )
    status = Counter(i.status for i in instances if i.origin == "agent")
    if status:
        lines += [
            "",
            "Generated instances: "
            + ", ".join(f"{n} {s}" for s, n in sorted(status.items()))
            + ". Every verdict is in `instances.jsonl` (provenance.checks).",
        ]
    lines.append("")
    return "\n".join(lines)
