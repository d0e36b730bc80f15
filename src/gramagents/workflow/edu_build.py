"""`gramagents build edu`: EduEval's data pipeline (`../shared/seeds/003_*`, §3, App. B).

A LangGraph `StateGraph` of stages, each recording how many items it kept and flagged (the
manifest's `stages`, like the paper's Table 6):

    ingest → standardize → optimize → route → dedup → calibrate → anomalies → banks

- ingest: the EduEval layout read by rules (`edu.sources`); lines the rules cannot parse are
  kept with their reasons for the next stage.
- standardize: the standardization agent (structured output) for what the rules could not
  parse; what it cannot fix either is kept in `failures.jsonl` with the reason.
- optimize: objective items become 4-option multiple choice; the distractor agent proposes
  the missing wrong options and a back-check confirms each is wrong.
- route: the router agent gives each item its dominant level (and secondary levels, DOK depth,
  reason) from the taxonomy's guide; a verification classifier (sentence embeddings and
  logistic regression, trained on items whose level the layout gives) cross-checks it;
  disagreements go to the review file.
- dedup: near-duplicates removed with MinHash LSH (threshold 0.85).
- calibrate: baseline models answer the objective items; items above 95 % or below 10 %
  accuracy are flagged.
- anomalies: length outliers and skewed answer-letter distributions are flagged.
- banks: zero-shot and few-shot (3 examples) items per task for `gramagents eval`.

Every flagged item, and a seeded sample of the rest, goes to `review.csv`, which a reviewer
edits (accept, reject, level) and imports back with `gramagents review RUN --import FILE`.
"""

from __future__ import annotations

import asyncio
import csv
import io
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import resources
from ..errors import InputError
from ..models import Model, create_backend
from ..models.base import BackendSettings
from ..progress import ProgressSink, SilentProgress
from ..records import Counts, GenParams, Item, PromptParts, RunManifest
from ..runtime.cache import NullCache, ResponseCache
from ..runtime.paths import default_cache_path
from ..runtime.rundir import RunFolder, now_iso, write_atomic, write_jsonl_atomic
from ..sources import _text
from ..sources.datasets import read_dataset
from ..templates import load_prompt
from ..versions import package_versions
from .recipe import RecipeChecker

OBJECTIVE = {"mc"}
"""Shapes whose items become 4-option multiple choice."""

TASK_OF_SHAPE = {
    "mc": ("EDU-MC", "edu/mc.md"),
    "dialogue": ("EDU-DIALOGUE", "edu/dialogue.md"),
    "essay": ("EDU-ESSAY", "edu/essay.md"),
    "poetry": ("EDU-TEXT", "edu/open.md"),
    "reading": ("EDU-TEXT", "edu/open.md"),
    "question_generation": ("EDU-QG", "edu/open.md"),
    "teaching_design": ("EDU-TD", "edu/open.md"),
    "text_writing": ("EDU-TW", "edu/open.md"),
}


# --- the recipe --------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentStage(_Strict):
    """An agent stage: its prompt, decoding and whether it runs."""

    prompt: str
    temperature: float = 0.0
    max_tokens: int = 256
    enabled: bool = True


class RouteStage(AgentStage):
    """The router and its verification classifier."""

    embedding_model: str = "minilm"
    min_per_level: int = Field(default=2, ge=2)
    """Items of a level needed before the classifier learns it."""


class DistractorStage(AgentStage):
    """The distractor agent and its back-check."""

    check_prompt: str
    options: int = Field(default=4, ge=2, le=8)


class DedupStage(_Strict):
    """MinHash LSH near-duplicate removal."""

    threshold: float = Field(default=0.85, gt=0, le=1)
    num_perm: int = Field(default=128, ge=16)


class CalibrateStage(_Strict):
    """Difficulty calibration against baseline models."""

    models: list[str] = Field(default_factory=list)
    samples: int = Field(default=3, ge=1)
    temperature: float = 0.7
    high: float = 0.95
    low: float = 0.10


class BankStage(_Strict):
    """Zero- and few-shot items."""

    shots: list[int] = Field(default_factory=lambda: [0, 3])


class EduStages(_Strict):
    """The stages of `graphs/edu.yaml`."""

    standardize: AgentStage
    distractors: DistractorStage
    route: RouteStage
    dedup: DedupStage = Field(default_factory=DedupStage)
    calibrate: CalibrateStage = Field(default_factory=CalibrateStage)
    banks: BankStage = Field(default_factory=BankStage)


class EduRecipe(_Strict):
    """`graphs/edu.yaml`."""

    recipe: str
    description: str = ""
    paper: str = ""
    source: Literal["edueval"]
    seed: int = 1234
    agents: dict[str, Any] = Field(default_factory=lambda: {"model": "smollm2", "max_reasks": 2})
    review: dict[str, Any] = Field(default_factory=lambda: {"sample": 5})
    stages: EduStages


def load_edu_recipe(path: Path) -> EduRecipe:
    """Read and check an EduEval recipe; errors name the file, line and field."""
    data, lines = _text.load_yaml_with_lines(path, _text.read_utf8(path))
    checker = RecipeChecker(path, data, lines)
    try:
        recipe = EduRecipe.model_validate(data)
    except ValidationError as exc:
        raise checker.from_validation(exc) from None
    for name in ("standardize", "distractors", "route"):
        stage = getattr(recipe.stages, name)
        for prompt in (stage.prompt, getattr(stage, "check_prompt", None)):
            if prompt is None:
                continue
            try:
                resources.find("prompts", prompt)
            except Exception:  # noqa: BLE001 - re-raised as a located error
                raise checker.fail(("stages", name, "prompt"), f"no prompt '{prompt}'") from None
    return recipe


# --- structured outputs of the agents -----------------------------------------------------------


class Standardized(BaseModel):
    """What the standardization agent makes of an item the rules could not parse."""

    question: str = Field(description="The question stem, without the options.")
    options: dict[str, str] = Field(description="Options by letter, e.g. {'A': '...'}.")
    answer: str = Field(description="The letter of the correct option.")
    explanation: str = ""


class Distractors(BaseModel):
    """Wrong options proposed for a multiple-choice item."""

    options: list[str] = Field(description="Plausible but wrong options, one per string.")
    reason: str = ""


class DistractorCheck(BaseModel):
    """Back-check of one proposed distractor."""

    correct: bool = Field(description="True if this option is ALSO a correct answer.")
    reason: str = ""


class Route(BaseModel):
    """The router's verdict on an item."""

    level: str = Field(description="Dominant level: one of the taxonomy's level ids.")
    secondary: list[str] = Field(default_factory=list)
    dok: int = Field(default=1, ge=1, le=4)
    reason: str = ""


# --- state -------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Per stage: items in, kept, flagged and removed."""

    stages: dict[str, dict[str, int]] = field(default_factory=dict)

    def record(self, stage: str, **counts: int) -> None:
        """Add counts to a stage."""
        row = self.stages.setdefault(stage, {})
        for key, value in counts.items():
            row[key] = row.get(key, 0) + value


class EduState(TypedDict, total=False):
    """State of the build graph."""

    items: list[Any]
    """Standardized items (`edu.sources.EduItem`)."""
    unparsed: list[Any]
    flags: dict[str, list[str]]
    """Item id to the reasons it goes to the review file."""
    routes: dict[str, dict[str, Any]]
    failures: list[dict[str, Any]]
    dataset: list[Item]


@dataclass
class EduContext:
    """What the nodes share: recipe, agent model, baseline models, tallies, progress."""

    recipe: EduRecipe
    root: Path
    agent: Model | None
    baselines: list[Model]
    tally: Tally
    progress: ProgressSink
    seed: int
    max_reasks: int
    cache: Any = None
    """The response cache (sentence embeddings are kept there too)."""
    warnings: list[str] = field(default_factory=list)


def _ctx(config: RunnableConfig) -> EduContext:
    return config["configurable"]["edu"]  # type: ignore[no-any-return]


def _flag(state: EduState, item_id: str, reason: str) -> None:
    state.setdefault("flags", {}).setdefault(item_id, []).append(reason)


async def _bounded(jobs: list[Any], limit: int = 16) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def one(job: Any) -> Any:
        async with gate:
            return await job

    return list(await asyncio.gather(*(one(j) for j in jobs)))


async def _ask(
    ctx: EduContext, stage: AgentStage, variables: dict[str, Any], schema: type[BaseModel]
) -> Any:
    assert ctx.agent is not None
    template = load_prompt(stage.prompt)
    return await ctx.agent.structured(
        template.render(variables),
        schema,
        params=GenParams(temperature=stage.temperature, max_tokens=stage.max_tokens),
        prompt_hash=template.hash,
        max_reasks=ctx.max_reasks,
    )


# --- nodes -------------------------------------------------------------------------------------


async def ingest(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Read the layout with the rules."""
    from ..recipes.edu.sources import read_edueval

    ctx = _ctx(config)
    result = read_edueval(ctx.root)
    ctx.warnings.extend(result.warnings)
    ctx.tally.record(
        "ingest",
        read=len(result.items) + len(result.unparsed),
        parsed=len(result.items),
        unparsed=len(result.unparsed),
        warnings=len(result.warnings),
    )
    return {"items": list(result.items), "unparsed": list(result.unparsed)}


async def standardize(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """The standardization agent for the lines the rules could not parse."""
    from ..recipes.edu.sources import from_agent

    ctx = _ctx(config)
    unparsed = state.get("unparsed", [])
    stage = ctx.recipe.stages.standardize
    failures = list(state.get("failures", []))
    items = list(state.get("items", []))
    if not unparsed or ctx.agent is None or not stage.enabled:
        for entry in unparsed:
            failures.append({"stage": "ingest", **_describe(entry)})
        ctx.tally.record("standardize", asked=0, fixed=0, failed=len(unparsed))
        return {"items": items, "failures": failures, "unparsed": []}
    outcomes = await _bounded(
        [
            _ask(ctx, stage, {"raw": entry.text, "reason": entry.reason}, Standardized)
            for entry in unparsed
        ]
    )
    fixed = 0
    for entry, outcome in zip(unparsed, outcomes, strict=True):
        value = outcome.value
        if value is not None and value.answer.strip().upper() in value.options:
            items.append(from_agent(entry, value.model_dump()))
            fixed += 1
        else:
            reason = outcome.error or f"answer '{value.answer}' is not one of the options"
            failures.append({"stage": "standardize", "reason": reason, **_describe(entry)})
    ctx.tally.record("standardize", asked=len(unparsed), fixed=fixed, failed=len(unparsed) - fixed)
    return {"items": items, "failures": failures, "unparsed": []}


def _describe(entry: Any) -> dict[str, Any]:
    return {
        "source": f"{entry.path}:{entry.line}",
        "reason_rules": entry.reason,
        "text": entry.text[:500],
    }


async def optimize(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Objective items become 4-option multiple choice (distractor agent, back-checked)."""
    ctx = _ctx(config)
    stage = ctx.recipe.stages.distractors
    items = state.get("items", [])
    short = [
        i for i in items if i.shape in OBJECTIVE and i.options and len(i.options) < stage.options
    ]
    if not short or ctx.agent is None or not stage.enabled:
        for item in short:
            _flag(state, item.id, f"only {len(item.options)} options")
        ctx.tally.record("optimize", short=len(short), completed=0)
        return {"items": items, "flags": state.get("flags", {})}
    proposals = await _bounded(
        [
            _ask(
                ctx,
                stage,
                {
                    "question": item.prompt,
                    "options": item.options,
                    "answer": item.answer,
                    "needed": stage.options - len(item.options),
                },
                Distractors,
            )
            for item in short
        ]
    )
    # Every proposed distractor of every item is back-checked at once.
    check_stage = AgentStage(prompt=stage.check_prompt, max_tokens=96)
    candidates: list[list[str]] = []
    checks: list[Any] = []
    for item, proposal in zip(short, proposals, strict=True):
        fresh = list(
            dict.fromkeys(
                o.strip()
                for o in (proposal.value.options if proposal.value else [])
                if o.strip() and o.strip() not in item.options.values()
            )
        )
        candidates.append(fresh)
        answer = item.options[item.answer]
        checks += [
            _ask(
                ctx,
                check_stage,
                {"question": item.prompt, "answer": answer, "option": o},
                DistractorCheck,
            )
            for o in fresh
        ]
    verdicts = iter(await _bounded(checks))
    completed = 0
    for item, fresh in zip(short, candidates, strict=True):
        wrong = [o for o in fresh if (v := next(verdicts).value) is not None and not v.correct]
        kept = wrong[: stage.options - len(item.options)]
        letters = [chr(ord("A") + k) for k in range(len(item.options) + len(kept))]
        if len(item.options) + len(kept) == stage.options:
            item.options = {
                **item.options,
                **dict(zip(letters[len(item.options) :], kept, strict=True)),
            }
            item.provenance.append(f"distractors: {len(kept)} added by agent, back-checked wrong")
            completed += 1
        else:
            _flag(state, item.id, f"only {len(item.options) + len(kept)} options after the agent")
    ctx.tally.record(
        "optimize", short=len(short), completed=completed, flagged=len(short) - completed
    )
    return {"items": items, "flags": state.get("flags", {})}


async def route(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Router agent, then the embedding classifier's cross-check."""
    from ..recipes.edu.taxonomy import level as find_level
    from ..recipes.edu.taxonomy import router_guide

    ctx = _ctx(config)
    stage = ctx.recipe.stages.route
    items = state.get("items", [])
    routes: dict[str, dict[str, Any]] = {}
    if ctx.agent is not None and stage.enabled and items:
        guide = router_guide()
        outcomes = await _bounded(
            [_ask(ctx, stage, {"guide": guide, "item": i.prompt[:1500]}, Route) for i in items]
        )
        for item, outcome in zip(items, outcomes, strict=True):
            if outcome.value is None:
                routes[item.id] = {"router": None, "error": outcome.error}
                continue
            try:
                routed = find_level(outcome.value.level).id
            except Exception:  # noqa: BLE001 - an unknown level name from the model
                routed = None
            routes[item.id] = {
                "router": routed,
                "secondary": outcome.value.secondary,
                "dok": outcome.value.dok,
                "reason": outcome.value.reason,
            }
    predicted = _verify(items, stage, ctx.cache)
    agree = disagree = 0
    for item in items:
        entry = routes.setdefault(item.id, {})
        entry["layout"] = item.level
        entry["classifier"] = predicted.get(item.id)
        votes = {v for v in (entry.get("router"), entry.get("classifier")) if v}
        if votes and votes != {item.level}:
            disagree += 1
            _flag(
                state,
                item.id,
                f"level: layout {item.level}, router {entry.get('router')}, "
                f"classifier {entry.get('classifier')}",
            )
        else:
            agree += 1
    ctx.tally.record("route", routed=len(items), agree=agree, flagged=disagree)
    return {"routes": routes, "flags": state.get("flags", {})}


def _verify(items: list[Any], stage: RouteStage, cache: Any) -> dict[str, str]:
    """Cross-validated level predictions of a logistic regression on sentence embeddings."""
    counts = Counter(i.level for i in items)
    learnable = [i for i in items if counts[i.level] >= stage.min_per_level]
    if len({i.level for i in learnable}) < 2:
        return {}
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from ..runtime.embeddings import Embedder

    embedder = Embedder(cache or NullCache())
    texts = [i.prompt[:1000] for i in learnable]
    vectors = np.asarray(embedder.embed(texts, stage.embedding_model))
    labels = [i.level for i in learnable]
    folds = min(5, min(Counter(labels).values()))
    classifier = LogisticRegression(max_iter=1000)
    predicted = cross_val_predict(
        classifier, vectors, labels, cv=StratifiedKFold(folds, shuffle=True, random_state=0)
    )
    return {i.id: str(p) for i, p in zip(learnable, predicted, strict=True)}


async def dedup(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """MinHash LSH near-duplicate removal."""
    from ..recipes.edu.qc import dedup as remove_duplicates

    ctx = _ctx(config)
    stage = ctx.recipe.stages.dedup
    items = state.get("items", [])
    kept, removed = remove_duplicates(items, threshold=stage.threshold, num_perm=stage.num_perm)
    failures = list(state.get("failures", []))
    for entry in removed:
        failures.append({"stage": "dedup", **entry})
    ctx.tally.record("dedup", before=len(items), kept=len(kept), removed=len(removed))
    return {"items": kept, "failures": failures}


async def calibrate(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Baseline models answer the objective items; too easy or too hard ones are flagged."""
    from ..recipes.edu.metrics import extract_choice
    from ..recipes.edu.qc import difficulty_flags

    ctx = _ctx(config)
    stage = ctx.recipe.stages.calibrate
    objective = [i for i in state.get("items", []) if i.shape in OBJECTIVE and i.options]
    if not ctx.baselines or not objective:
        ctx.tally.record("calibrate", checked=0, flagged=0)
        return {}
    template = load_prompt("edu/mc.md")
    right: dict[str, list[float]] = defaultdict(list)
    for model in ctx.baselines:
        for sample in range(stage.samples):
            requests = [
                _mc_request(template, item, stage.temperature, sample) for item in objective
            ]
            answers = await model.generate(requests)
            for item, answer in zip(objective, answers, strict=True):
                letter, _ = extract_choice(answer.text or "", "".join(item.options))
                right[item.id].append(1.0 if letter == item.answer else 0.0)
    accuracy = {k: sum(v) / len(v) for k, v in right.items()}
    flags = difficulty_flags(accuracy, high=stage.high, low=stage.low)
    for item in objective:
        item.calibration = accuracy.get(item.id)
    for item_id, flag in flags.items():
        _flag(state, item_id, f"difficulty: {flag} (baseline accuracy {accuracy[item_id]:.2f})")
    ctx.tally.record("calibrate", checked=len(objective), flagged=len(flags))
    return {"flags": state.get("flags", {})}


def _mc_request(template: Any, item: Any, temperature: float, sample: int) -> Any:
    from ..records import ChatRequest

    return ChatRequest(
        messages=template.render(_mc_vars(item, [])),
        params=GenParams(temperature=temperature, max_tokens=32, seed=sample),
        prompt_hash=template.hash,
        sample=sample,
    )


async def anomalies(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Length outliers and skewed answer-letter distributions."""
    from ..recipes.edu.qc import anomaly_flags

    ctx = _ctx(config)
    items = state.get("items", [])
    found = anomaly_flags(items)
    for item_id, reasons in found.items():
        for reason in reasons:
            _flag(state, item_id, reason)
    ctx.tally.record("anomalies", checked=len(items), flagged=len(found))
    return {"flags": state.get("flags", {})}


async def banks(state: EduState, config: RunnableConfig) -> dict[str, Any]:
    """Zero-shot and few-shot items per task, in the order read."""
    ctx = _ctx(config)
    items = state.get("items", [])
    routes = state.get("routes", {})
    flags = state.get("flags", {})
    by_source: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for item in items:
        by_source[item.level, item.shape].append(item)  # examples: same level, same shape
    rng = random.Random(ctx.seed)
    dataset: list[Item] = []
    for shots in ctx.recipe.stages.banks.shots:
        for item in items:
            task, template = TASK_OF_SHAPE[item.shape]
            examples: list[dict[str, Any]] = []
            if shots:
                pool = [
                    o for o in by_source[item.level, item.shape] if o.id != item.id and o.answer
                ]
                if item.shape in ("question_generation", "teaching_design") or len(pool) < shots:
                    continue  # no worked examples to show: zero-shot only
                examples = [_shot(o) for o in rng.sample(pool, shots)]
            name = task if not shots else f"{task}-{shots}SHOT"
            dataset.append(
                Item(
                    id=f"{item.id}@{shots}shot",
                    task=name,
                    prompt=PromptParts(template=template, vars=_vars(item, examples)),
                    answer=_gold(item),
                    meta={
                        "level": item.level,
                        "subject": item.subject,
                        "grade": item.grade,
                        "source_task": item.task,
                        "shape": item.shape,
                        "shots": shots,
                        "difficulty": item.difficulty,
                        "options": item.options,
                        "route": routes.get(item.id),
                        "flags": flags.get(item.id, []),
                        "source": item.source,
                    },
                )
            )
    ctx.tally.record("banks", items=len(dataset))
    return {"dataset": dataset}


def _gold(item: Any) -> Any:
    if item.shape in ("question_generation", "teaching_design", "text_writing"):
        return None  # judged with a rubric
    if item.shape in ("dialogue", "essay"):
        return int(item.answer)
    return item.answer


def _mc_vars(item: Any, shots: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "subject": item.subject or "",
        "question": item.prompt,
        "options": item.options or {},
        "shots": shots,
    }


def _vars(item: Any, shots: list[dict[str, Any]]) -> dict[str, Any]:
    if item.shape == "mc":
        return _mc_vars(item, shots)
    if item.shape == "dialogue":
        return {"dialogue": item.prompt, "shots": shots}
    if item.shape == "essay":
        return {"question": item.raw.get("question", ""), "essay": item.prompt, "shots": shots}
    return {"prompt": item.prompt, "shots": shots, "task_input": item.prompt}


def _shot(item: Any) -> dict[str, Any]:
    if item.shape == "mc":
        text = item.prompt + "\n" + "\n".join(f"{k}. {v}" for k, v in (item.options or {}).items())
        return {"prompt": text, "answer": item.answer}
    if item.shape == "essay":
        return {"prompt": item.raw.get("question", ""), "answer": item.answer}
    return {"prompt": item.prompt, "answer": item.answer}


def edu_graph() -> Any:
    """The build graph: one node per stage, in the paper's order."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(EduState)
    order = [
        ("ingest", ingest),
        ("standardize", standardize),
        ("optimize", optimize),
        ("route", route),
        ("dedup", dedup),
        ("calibrate", calibrate),
        ("anomalies", anomalies),
        ("banks", banks),
    ]
    previous = START
    for name, node in order:
        graph.add_node(name, node)
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph.compile()


# --- the command -------------------------------------------------------------------------------


@dataclass
class EduBuildResult:
    """Where the build went."""

    folder: RunFolder
    manifest: RunManifest
    items: list[Item]
    dataset_path: Path


async def run_edu_build(
    recipe_path: Path, options: Any, progress: ProgressSink | None = None
) -> EduBuildResult:
    """Run the EduEval pipeline over `options.source` (the layout's root folder)."""
    progress = progress or SilentProgress()
    recipe = load_edu_recipe(recipe_path)
    root = Path(options.source)
    if not root.is_dir():
        raise InputError(root, "the EduEval source is a folder with one folder per level")
    seed = options.seed if options.seed is not None else recipe.seed
    settings = BackendSettings(concurrency=options.concurrency, retry=options.retry)
    cache = (
        ResponseCache(options.cache_path or default_cache_path())
        if options.use_cache
        else NullCache()
    )
    agent_spec = options.agent_model or recipe.agents.get("model", "smollm2")
    agent = Model(create_backend(agent_spec, settings), cache) if options.agents else None
    baselines = (
        [Model(create_backend(s, settings), cache) for s in recipe.stages.calibrate.models]
        if options.agents
        else []
    )
    for model in [m for m in (agent, *baselines) if m is not None]:
        await model.backend.check()
    folder = RunFolder.open(options.run_dir, "build")
    manifest = RunManifest(
        run_id=folder.run_id,
        kind="build",
        command=options.command,
        recipe=recipe.recipe,
        models=sorted({m.label for m in (agent, *baselines) if m is not None}),
        seed=seed,
        versions=package_versions(),
        hashes={"recipe": resources.file_hash(recipe_path)},
        started=now_iso(),
        source={"path": str(root)},
        agents="on" if options.agents else "off",
    )
    folder.write_manifest(manifest)
    ctx = EduContext(
        recipe=recipe,
        root=root,
        agent=agent,
        baselines=baselines,
        tally=Tally(),
        progress=progress,
        seed=seed,
        max_reasks=int(recipe.agents.get("max_reasks", 2)),
        cache=cache,
    )
    try:
        progress.start("build edu", 8)
        state = await edu_graph().ainvoke({}, config={"configurable": {"edu": ctx}})
    except BaseException:
        if folder.created:
            folder.discard()
        raise
    finally:
        progress.stop()
        for model in [m for m in (agent, *baselines) if m is not None]:
            await model.backend.aclose()
        cache.close()
    models = [m for m in (agent, *baselines) if m is not None]
    dataset: list[Item] = state.get("dataset", [])
    manifest.counts = Counts(
        items=len(dataset),
        requests_sent=sum(m.stats.requests_sent for m in models),
        cache_hits=sum(m.stats.cache_hits for m in models),
        failed=sum(1 for f in state.get("failures", []) if f.get("stage") != "dedup"),
    )
    manifest.stages = ctx.tally.stages
    manifest.tasks = dict(Counter(i.task for i in dataset))
    dataset_path = folder.file("dataset.jsonl")
    write_jsonl_atomic(dataset_path, dataset)
    write_jsonl_atomic(
        folder.file("standardized.jsonl"), [i.record() for i in state.get("items", [])]
    )
    if state.get("failures"):
        write_jsonl_atomic(folder.file("failures.jsonl"), state["failures"])
    write_atomic(folder.file("recipe.yaml"), recipe_path.read_text(encoding="utf-8"))
    queue = review_rows(state, seed, int(recipe.review.get("sample", 5)))
    write_atomic(folder.file("review.csv"), _csv(queue))
    manifest.review = {
        "file": "review.csv",
        "rows": len(queue),
        "flagged": len(state.get("flags", {})),
    }
    manifest.artifacts = {"warnings": ctx.warnings[:200]}
    write_atomic(folder.file("report.md"), _report(manifest))
    manifest.status = "complete"
    manifest.finished = now_iso()
    folder.write_manifest(manifest)
    folder.close()
    return EduBuildResult(
        folder=folder, manifest=manifest, items=dataset, dataset_path=dataset_path
    )


REVIEW_COLUMNS = [
    "item_id",
    "level",
    "task",
    "flags",
    "prompt",
    "decision",
    "new_level",
    "reviewer",
    "note",
]


def review_rows(state: EduState, seed: int, sample: int) -> list[dict[str, str]]:
    """Every flagged item, and `sample` unflagged ones drawn with the seed."""
    flags = state.get("flags", {})
    items = state.get("items", [])
    flagged = [i for i in items if i.id in flags]
    rest = [i for i in items if i.id not in flags]
    drawn = random.Random(seed).sample(rest, min(sample, len(rest)))
    return [
        {
            "item_id": i.id,
            "level": i.level,
            "task": i.task,
            "flags": "; ".join(flags.get(i.id, [])),
            "prompt": i.prompt[:300],
            "decision": "",
            "new_level": "",
            "reviewer": "",
            "note": "",
        }
        for i in [*flagged, *drawn]
    ]


def _csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=REVIEW_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def import_edu_review(folder: RunFolder, review: Path) -> dict[str, int]:
    """Apply a reviewer's decisions to the dataset.

    Rejected items leave it, edited ones take the new level, and each decided item records
    who decided what (`meta.review`).
    """
    text = _text.read_utf8(review)
    decisions: dict[str, dict[str, str]] = {}
    for line, row in _text.iter_csv(review, text, ("item_id", "decision")):
        decision = (row.get("decision") or "").strip().lower()
        if decision not in ("", "accept", "reject", "edit"):
            raise InputError(
                review,
                f"decision must be accept, reject or edit, not '{decision}'",
                line=line,
                field="decision",
            )
        if decision == "edit" and not (row.get("new_level") or "").strip():
            raise InputError(review, "an edit needs new_level", line=line, field="new_level")
        if decision:
            decisions[row["item_id"]] = row
    path = folder.file("dataset.jsonl")
    items = read_dataset(path).items
    kept: list[Item] = []
    counts = Counter()
    for item in items:
        base = item.id.split("@", 1)[0]
        row = decisions.get(base)
        if row is None:
            kept.append(item)
            continue
        decision = row["decision"].strip().lower()
        review_note = {
            "decision": decision,
            "reviewer": row.get("reviewer") or "reviewer",
            "note": row.get("note") or "",
        }
        if decision == "reject":
            counts["rejected"] += 1
            continue
        if decision == "edit":
            item.meta["level"] = row["new_level"].strip()
            review_note["new_level"] = item.meta["level"]
            counts["edited"] += 1
        else:
            counts["accepted"] += 1
        item.meta["review"] = review_note
        kept.append(item)
    write_jsonl_atomic(path, kept)
    return dict(counts)


def _report(manifest: RunManifest) -> str:
    lines = [
        f"# EduEval build {manifest.run_id}",
        "",
        "## Stages (kept and flagged)",
        "",
        "| stage | counts |",
        "| --- | --- |",
    ]
    for stage, counts in manifest.stages.items():
        lines.append(f"| {stage} | {', '.join(f'{k} {v}' for k, v in counts.items())} |")
    lines += ["", "## Items per task", "", "| task | items |", "| --- | --- |"]
    lines += [f"| {t} | {n} |" for t, n in sorted(manifest.tasks.items())]
    return "\n".join(lines) + "\n"
