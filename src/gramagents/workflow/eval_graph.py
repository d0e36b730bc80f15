"""The eval graph: plan → answer (model → judge → score) per chunk → report.

`plan` renders every item once (a chat request, or a minimal pair's two scoring requests),
asks the cache in one query which answers it already holds, and cuts the work into chunks
(without the cache, each chunk renders its own items):
answers the cache holds in large chunks (they cost no model time, only bookkeeping), the
rest in chunks of what the backend handles well at once (two local batches, or as many
requests as may be in flight). Chunks are fanned out with `Send`. The model backend is not
part of the graph: it arrives in the run config, so the same compiled graph runs a local
transformers model and an API model. A chunk's `answer` node asks the model, has the rubric
judge score the answers of judged tasks (when there are any), then reads each answer with its
task's extraction chain and scores it, item by item (one pass over the chunk's items, while
each is at hand), and appends the chunk's records.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, TypedDict, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from ..models.model import Model
from ..records import (
    ChatRequest,
    Generation,
    GenParams,
    Item,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    ResponseRecord,
    ScoreRecord,
)
from ..runtime.memory import collector_paused, keep_out_of_collection
from ..scoring.extract import Extraction, extract
from ..scoring.metrics import ItemScore, score_item
from ..tasks import TaskSpec
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate

if TYPE_CHECKING:
    from ..judging.rubric import Rubric
    from .eval import ChunkRecords

SCORE_META_KEYS = ("point", "name", "category", "level", "language", "position")


CACHED_CHUNK = 1000
"""Items per chunk when the cache holds every answer of the chunk."""


class EvalState(TypedDict, total=False):
    """State of one model's evaluation."""

    items: list[Item]
    chunks: list[dict[str, Any]]
    answered: Annotated[int, operator.add]


class ChunkState(TypedDict, total=False):
    """State of one chunk on its way through the model (lists aligned with `items`)."""

    items: list[Item]
    requests: list[ChatRequest | None]
    pairs: list[tuple[LoglikelihoodRequest, LoglikelihoodRequest] | None]
    chat_keys: list[str]
    """Cache keys of the chat requests (those not None), in order."""
    pair_keys: list[str]
    """Cache keys of the scoring requests (two per pair), in order."""
    generations: list[Generation | None]
    likelihoods: list[tuple[Loglikelihood, Loglikelihood] | None]
    judgments: list[dict[str, Any] | None]
    """Per item: the rubric judge's verdict (judged tasks only)."""
    answered: Annotated[int, operator.add]


T = TypeVar("T")


@dataclass
class EvalContext:
    """What the nodes need besides the state: the model, the tasks and the record sinks."""

    model: Model
    tasks: dict[str, TaskSpec]
    records: Callable[[str], ChunkRecords]
    """A buffer for one chunk's records of a model (`RecordWriter.chunk`)."""
    advance: Callable[[int], None]
    """Counts items scored (the run's progress)."""
    report: Callable[[], object] | None
    """Writes the report of what is recorded so far (None: the caller writes it next)."""
    judge: Model | None = None
    """The rubric judge, when some task is judged."""
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    """The rubrics of the judged items, by the name items and tasks give (loaded once)."""
    templates: dict[str, PromptTemplate] = field(default_factory=dict)
    """Every prompt template the run renders (the judge's included), by name: loaded once per
    run, as the manifest hashed them."""
    conditioning: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task of the run, how its sentences are scored (pair_conditioning.py
    resolves every one: the run's option, else its items', else the task's own)."""
    tally: Callable[[str, int], None] = field(default=lambda name, count: None)
    """Counts what a chunk has done so far (`answered` by the model, `judged`), for progress."""


def _context(config: RunnableConfig) -> EvalContext:
    return config["configurable"]["eval"]  # type: ignore[no-any-return]


def _render(
    items: list[Item], ctx: EvalContext
) -> tuple[
    list[ChatRequest | None], list[tuple[LoglikelihoodRequest, LoglikelihoodRequest] | None]
]:
    """Each item's chat request, or for a minimal pair its two scoring requests.

    A task's decoding parameters are the model's where its spec sets some (`Model.params`).
    """
    tasks, templates = ctx.tasks, ctx.templates
    params = {name: ctx.model.params(spec.params) for name, spec in tasks.items()}
    requests: list[ChatRequest | None] = []
    pairs: list[tuple[LoglikelihoodRequest, LoglikelihoodRequest] | None] = []
    for item in items:
        spec = tasks[item.task]
        if spec.mode == "loglikelihood":
            parts = item.prompt.vars
            context = str(parts.get("context", ""))
            how = ctx.conditioning[item.task]
            pairs.append(
                (
                    LoglikelihoodRequest(
                        context=context, continuation=parts["good"], conditioning=how
                    ),
                    LoglikelihoodRequest(
                        context=context, continuation=parts["bad"], conditioning=how
                    ),
                )
            )
            requests.append(None)
            continue
        template = templates[item.prompt.template]
        requests.append(
            ChatRequest(
                messages=template.render(item.prompt.vars),
                params=params[item.task],
                prompt_hash=template.hash,
                base_prompt=template.render_base(item.prompt.vars),
            )
        )
        pairs.append(None)
    return requests, pairs


async def plan(state: EvalState, config: RunnableConfig) -> dict[str, Any]:
    """Ask the cache what it holds, and cut the work into chunks.

    With the cache, every item is rendered here, since its key is a hash of the rendered
    request and the cache is asked once for all of them. Without it (`--no-cache`), nothing
    needs the requests before their chunk runs: the chunks render their own items, so the
    first requests leave without waiting for the last items to be rendered.
    """
    ctx = _context(config)
    items = state.get("items", [])
    model = ctx.model
    size = model.backend.chunk_size
    if not model.cache.enabled:
        return {"chunks": [{"items": items[k : k + size]} for k in range(0, len(items), size)]}
    with collector_paused():
        requests, pairs = _render(items, ctx)
        chat_keys = model.chat_keys([r for r in requests if r is not None])
        pairs_flat = [r for pair in pairs if pair is not None for r in pair]
        pair_keys = model.likelihood_keys(pairs_flat)
    known = model.known([*chat_keys, *pair_keys])
    work: list[dict[str, Any]] = []
    chat_at = pair_at = 0
    for item, request, pair in zip(items, requests, pairs, strict=True):
        entry: dict[str, Any]
        if request is not None:
            keys, chat_at = chat_keys[chat_at : chat_at + 1], chat_at + 1
            entry = {"item": item, "request": request, "pair": None, "keys": keys}
        else:
            keys, pair_at = pair_keys[pair_at : pair_at + 2], pair_at + 2
            entry = {"item": item, "request": None, "pair": pair, "keys": keys}
        entry["cached"] = all(k in known for k in keys)
        work.append(entry)
    # The rendered requests live until the run ends: keep them out of the collector's walks
    # (the run lets go of them with `long_lived`'s end).
    keep_out_of_collection()
    cached = [w for w in work if w["cached"]]
    fresh = [w for w in work if not w["cached"]]
    chunks = [_chunk(cached[k : k + CACHED_CHUNK]) for k in range(0, len(cached), CACHED_CHUNK)]
    chunks += [_chunk(fresh[k : k + size]) for k in range(0, len(fresh), size)]
    return {"chunks": chunks}


def _chunk(work: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "items": [w["item"] for w in work],
        "requests": [w["request"] for w in work],
        "pairs": [w["pair"] for w in work],
        "chat_keys": [k for w in work if w["request"] is not None for k in w["keys"]],
        "pair_keys": [k for w in work if w["pair"] is not None for k in w["keys"]],
    }


def fan_out(state: EvalState) -> list[Send]:
    """One `answer` task per chunk."""
    return [Send("answer", chunk) for chunk in state.get("chunks", [])]


async def generate(state: ChunkState, config: RunnableConfig) -> ChunkState:
    """Ask the model (the cache answers what it already knows)."""
    ctx = _context(config)
    model = ctx.model
    if "requests" in state:
        requests, item_pairs = state["requests"], state["pairs"]
    else:  # no cache: the plan left the rendering to the chunk
        requests, item_pairs = _render(state["items"], ctx)
    chats = [r for r in requests if r is not None]
    scored = [r for pair in item_pairs if pair is not None for r in pair]
    answers: list[Generation] = []
    likelihoods: list[Loglikelihood] = []
    if chats and scored:  # both kinds in one chunk: asked side by side
        answers, likelihoods = await asyncio.gather(
            model.generate(chats, keys=state.get("chat_keys")),
            model.loglikelihood(scored, keys=state.get("pair_keys")),
        )
    elif chats:  # awaited directly: a backend that answers at once lets the chunk run through
        answers = await model.generate(chats, keys=state.get("chat_keys"))
    elif scored:
        likelihoods = await model.loglikelihood(scored, keys=state.get("pair_keys"))
    generations: list[Generation | None]
    pairs: list[tuple[Loglikelihood, Loglikelihood] | None]
    if not scored:  # no minimal pairs in the chunk: the answers are aligned already
        generations, pairs = list(answers), [None] * len(requests)
    else:
        generations, pairs = [], []
        answer_iter, score_iter = iter(answers), iter(likelihoods)
        for request, pair in zip(requests, item_pairs, strict=True):
            generations.append(next(answer_iter) if request is not None else None)
            pairs.append((next(score_iter), next(score_iter)) if pair is not None else None)
    return {
        "requests": requests,
        "pairs": item_pairs,
        "generations": generations,
        "likelihoods": pairs,
    }


def _pair_extraction(good: Loglikelihood, bad: Loglikelihood) -> Extraction:
    return Extraction(
        {
            "good": good.logprob,
            "bad": bad.logprob,
            "good_mean": good.mean_logprob,
            "bad_mean": bad.mean_logprob,
            "good_tokens": good.n_tokens,
            "bad_tokens": bad.n_tokens,
        },
        "loglikelihood",
    )


async def judge_answers(state: ChunkState, config: RunnableConfig) -> dict[str, Any]:
    """Have the rubric judge score the answers of judged tasks (others pass through)."""
    ctx = _context(config)
    items = state["items"]
    verdicts: list[dict[str, Any] | None] = [None] * len(items)
    if ctx.judge is None:
        return {"judgments": verdicts}  # nothing in this run is judged
    from ..judging.rubric import JUDGE_PROMPT

    template = ctx.templates[JUDGE_PROMPT]
    at: list[int] = []
    jobs: list[Any] = []
    for index, (item, request, generation) in enumerate(
        zip(items, state["requests"], state["generations"], strict=True)
    ):
        name = rubric_of(item, ctx.tasks)
        if name is None or generation is None or generation.error is not None:
            continue
        assert request is not None
        task_input = str(item.prompt.vars.get("task_input") or request.messages[-1].content)
        at.append(index)
        jobs.append(
            _counted(
                judge_one(ctx.judge, ctx.rubrics[name], task_input, generation.text, template),
                lambda count: ctx.tally("judged", count),
            )
        )
    for index, verdict in zip(at, await asyncio.gather(*jobs), strict=True):
        verdicts[index] = verdict
    return {"judgments": verdicts}


async def _counted(job: Awaitable[T], count: Callable[[int], None]) -> T:
    """`job`'s result, counted once it returns."""
    result = await job
    count(1)
    return result


async def judge_one(
    judge: Model, rubric: Rubric, task_input: str, answer: str, template: PromptTemplate
) -> dict[str, Any]:
    """One judgment: every dimension of the rubric scored at temperature 0.

    A total that does not add up is re-asked; the rubric's content hash is part of the
    request, hence of its cache key, so an edited rubric is judged afresh. `template` is the
    judge prompt, as the run loaded it.
    """
    from ..judging.rubric import judge_messages, judgment_model

    outcome = await judge.structured(
        ChatRequest(
            messages=[
                Message.model_validate(m)
                for m in judge_messages(rubric, task_input, answer, template)
            ],
            params=GenParams(temperature=0.0, max_tokens=384),
            prompt_hash=template.hash,
            rubric_hash=rubric.hash,
        ),
        judgment_model(rubric),
    )
    verdict: dict[str, Any] = {
        "rubric": rubric.id,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.hash,
        "scale": list(rubric.scale),
        "judge": judge.label,
    }
    if outcome.value is None:
        verdict["error"] = outcome.error or "no judgment"
        verdict["unreachable"] = outcome.unreachable
        return verdict
    verdict["dimensions"] = outcome.value.dimension_scores()
    verdict["total"] = outcome.value.total_score()
    verdict["reason"] = getattr(outcome.value, "reason", "")
    return verdict


def _judged(verdict: dict[str, Any], answer: str, extraction: Extraction) -> tuple[ItemScore, bool]:
    details = {"judge": verdict, "answer_chars": len(answer)}
    lo, hi = verdict["scale"]
    if "total" not in verdict or extraction.invalid:
        # no valid judgment, or no answer to judge (an echo, a refusal): counted as invalid,
        # scored as the minimum
        return ItemScore({"judge_pct": 0.0, "judge_total": lo}, details), True
    total = verdict["total"]
    pct = 100.0 * (total - lo) / (hi - lo) if hi > lo else 0.0
    return ItemScore({"judge_pct": pct, "judge_total": total}, details), False


def _pair_response(
    label: str, item: Item, pair: tuple[Loglikelihood, Loglikelihood]
) -> tuple[Extraction, ResponseRecord]:
    """A minimal pair's scores as an extraction, and its response record."""
    extraction = _pair_extraction(*pair)
    value = extraction.value
    response = ResponseRecord(
        model=label,
        item_id=item.id,
        task=item.task,
        raw=None,
        extracted="good" if value["good"] > value["bad"] else "bad",
        rule=extraction.rule,
        cached=pair[0].cached and pair[1].cached,
        logprobs=value,
    )
    return extraction, response


async def score(state: ChunkState, config: RunnableConfig) -> dict[str, Any]:
    """Extract and score each answer, and append the records."""
    ctx = _context(config)
    label = ctx.model.label
    tasks = ctx.tasks
    meta_keys = {name: (*SCORE_META_KEYS, *spec.breakdowns) for name, spec in tasks.items()}
    records = ctx.records(label)
    scored = 0
    judgments = state.get("judgments") or [None] * len(state["items"])
    for item, request, generation, pair, verdict in zip(
        state["items"],
        state["requests"],
        state["generations"],
        state["likelihoods"],
        judgments,
        strict=True,
    ):
        spec = tasks[item.task]
        if pair is not None:
            extraction, response = _pair_response(label, item, pair)
        else:  # a completion: read by the task's extraction chain
            assert generation is not None and request is not None
            text = None if generation.error else generation.text
            # the chain sees the prompt that was sent, so that an echo of it is no answer
            known = {**item.prompt.vars, **item.meta}
            extraction = extract(spec.extractor, text, known, request.messages)
            response = ResponseRecord(
                model=label,
                item_id=item.id,
                task=item.task,
                raw=text,
                extracted=extraction.value,
                rule=extraction.rule,
                invalid_reason=extraction.reason if text is not None else None,
                latency_s=round(generation.latency_s, 4),
                cached=generation.cached,
                error=generation.error,
                prompt_hash=request.prompt_hash,
            )
        if response.error is not None:  # re-asked when the run is resumed; it has no score
            records.add(response)
            continue
        if verdict is not None and verdict.get("unreachable"):
            records.add(response)  # judged again when the run is resumed
            continue
        invalid, reason = extraction.invalid, extraction.reason
        if verdict is not None:
            result, invalid = _judged(verdict, response.raw or "", extraction)
            reason = (reason or "no-judgment") if invalid else None
        elif item.answer is None:
            result = ItemScore({})
        else:
            result = score_item(spec.metric, extraction, item.answer, item.meta)
        meta = item.meta
        score = ScoreRecord(
            model=label,
            item_id=item.id,
            task=item.task,
            gold=item.answer,
            extracted=response.extracted,
            invalid=invalid,
            invalid_reason=reason if invalid else None,
            scores=result.scores,
            details=result.details,
            meta={k: meta[k] for k in meta_keys[item.task] if k in meta},
        )
        records.add(response, score)  # serialised now: neither record outlives its item
        scored += 1
    records.commit()
    ctx.advance(len(state["items"]))
    return {"answered": scored}


async def report(state: EvalState, config: RunnableConfig) -> dict[str, Any]:
    """Rewrite the summary and report from everything recorded so far."""
    write = _context(config).report
    if write is not None:
        write()
    return {}


async def answer(chunk: ChunkState, config: RunnableConfig) -> dict[str, Any]:
    """One chunk: model, then the judge (only when some task is judged), then score.

    The steps run in one graph node, one `Send` per chunk: as a subgraph they cost LangGraph's
    per-step bookkeeping for every step of every chunk (bench/graph.py).
    """
    # a new dict: the chunk given by the plan lives as long as the run, its answers must not
    chunk = {**chunk, **(await generate(chunk, config))}
    _context(config).tally("answered", len(chunk["items"]))
    if _context(config).judge is not None:
        chunk["judgments"] = (await judge_answers(chunk, config))["judgments"]
    return await score(chunk, config)


@lru_cache(maxsize=1)
def eval_graph() -> Any:
    """The compiled eval graph (built once per process)."""
    graph = StateGraph(EvalState)
    graph.add_node("plan", plan)
    graph.add_node("answer", answer)  # type: ignore[arg-type]  # fed by Send, not the state
    graph.add_node("report", report)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", fan_out, ["answer"])
    graph.add_edge("answer", "report")
    graph.add_edge("report", END)
    return graph.compile()
