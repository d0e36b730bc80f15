"""The eval graph: plan → answer (model → judge → score) per chunk → report.

`plan` renders every item once (a chat request, or a minimal pair's two scoring requests or
its two forced-choice requests)
into its `ItemWork` (eval_work.py), asks the cache in one query which answers it already
holds, and cuts the work into chunks (without the cache, each chunk renders its own items):
answers the cache holds in large chunks (they cost no model time, only bookkeeping), the
rest in chunks of what the backend handles well at once (two local batches, or as many
requests as may be in flight). Chunks are fanned out with `Send`. The model backend is not
part of the graph: it arrives in the run config, so the same compiled graph runs a local
transformers model and an API model. A chunk's `answer` node asks the model, has the rubric
judge score the answers of judged tasks (when there are any, eval_judge.py), then reads each
answer with its task's extraction chain and scores it, item by item (one pass over the
chunk's items, while each is at hand, eval_score.py), and appends the chunk's records. After a
stop (runtime/interrupt.py) a chunk records what was answered and leaves out what was not
asked; chunks not yet started do not start.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Annotated, Any, TypedDict, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from ..records import ChatRequest, Generation, Item, Loglikelihood, LoglikelihoodRequest
from ..runtime.answers import counting
from ..runtime.interrupt import STOP
from ..runtime.memory import collector_paused, keep_out_of_collection
from .eval_judge import judge_answers
from .eval_score import ChunkScorer
from .eval_work import ChunkState, EvalContext, ItemWork, requests_of, steps_of
from .pair_methods import choice_requests

T = TypeVar("T")

CACHED_CHUNK = 1000
"""Items per chunk when the cache holds every answer of the chunk."""


class EvalState(TypedDict, total=False):
    """State of one model's evaluation."""

    items: list[Item]
    chunks: list[ChunkState]
    answered: Annotated[int, operator.add]


def _context(config: RunnableConfig) -> EvalContext:
    return config["configurable"]["eval"]  # type: ignore[no-any-return]


def _render(items: list[Item], ctx: EvalContext) -> list[ItemWork]:
    """Each item's work: its chat request, or for a minimal pair its two scoring requests.

    A task's decoding parameters are the model's where its spec sets some (`Model.params`).
    """
    tasks, templates = ctx.tasks, ctx.templates
    params = {name: ctx.model.params(spec.params) for name, spec in tasks.items()}
    work: list[ItemWork] = []
    for item in items:
        variables = item.prompt.vars
        if tasks[item.task].mode == "loglikelihood":
            context = str(variables.get("context", ""))
            how = ctx.conditioning[item.task]
            good = LoglikelihoodRequest(
                context=context, continuation=variables["good"], conditioning=how
            )
            bad = LoglikelihoodRequest(
                context=context, continuation=variables["bad"], conditioning=how
            )
            work.append(ItemWork(item, pair=(good, bad)))
            continue
        template = templates[item.prompt.template]
        if tasks[item.task].mode == "choice":
            work.append(ItemWork(item, choice=choice_requests(item, template, params[item.task])))
            continue
        request = ChatRequest(
            messages=template.render(variables),
            params=params[item.task],
            prompt_hash=template.hash,
            base_prompt=template.render_base(variables),
        )
        work.append(ItemWork(item, request))
    return work


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
        items = sorted(items, key=_longest_first(ctx))
        return {"chunks": [{"items": items[k : k + size]} for k in range(0, len(items), size)]}
    with collector_paused():
        work = _render(items, ctx)
        split = requests_of(work)
        chat_keys = model.chat_keys(split.chat_requests)
        pair_keys = model.likelihood_keys(split.pair_requests)
    at = 0
    for entry in split.chats:
        asked = len(entry.chats())  # two for a pair asked as a forced choice
        entry.keys, at = tuple(chat_keys[at : at + asked]), at + asked
    for at, entry in enumerate(split.pairs):
        entry.keys = (pair_keys[2 * at], pair_keys[2 * at + 1])
    known = model.known([*chat_keys, *pair_keys])
    # The rendered requests live until the run ends: keep them out of the collector's walks
    # (the run lets go of them with `long_lived`'s end).
    keep_out_of_collection()
    cached: list[ItemWork] = []
    fresh: list[ItemWork] = []
    for entry in work:
        (cached if known.issuperset(entry.keys) else fresh).append(entry)
    first = _longest_first(ctx)  # only what goes to the model is ordered for it
    fresh.sort(key=lambda entry: first(entry.item))
    chunks: list[ChunkState] = [
        {"work": cached[k : k + CACHED_CHUNK]} for k in range(0, len(cached), CACHED_CHUNK)
    ]
    chunks += [{"work": fresh[k : k + size]} for k in range(0, len(fresh), size)]
    return {"chunks": chunks}


def _longest_first(ctx: EvalContext) -> Callable[[Item], tuple[int, str, int]]:
    """The sort key that puts items in the order a local model computes them fastest.

    Those whose answers may be longest first: a batch of long answers takes about as long
    as a batch of short ones times their length, and a CPU computes several batches side by
    side, so long answers left to the end run in small batches while the other lanes idle
    (on the quick start, the last 25 seconds of three minutes). Then by template and, within
    one, longest prompt first, so that a chunk's prompts are alike in length and its batches
    full, not cut where lengths halve (`hf._buckets`). Records are written as answers come
    either way, and the report sorts what it shows.
    """
    tasks = ctx.tasks

    def cost(item: Item) -> tuple[int, str, int]:
        task = tasks.get(item.task)
        answer = 0 if task is None or task.mode == "loglikelihood" else task.params.max_tokens
        prompt = sum(len(str(value)) for value in item.prompt.vars.values())
        return -answer, item.prompt.template, -prompt

    return cost


def fan_out(state: EvalState) -> list[Send]:
    """One `answer` task per chunk."""
    return [Send("answer", chunk) for chunk in state.get("chunks", [])]


async def generate(work: list[ItemWork], ctx: EvalContext, keyed: bool) -> None:
    """Ask the model for every item's answer (the cache answers what it already knows).

    `keyed`: the plan gave each item its requests' cache keys.
    """
    model = ctx.model
    split = requests_of(work)
    chats, pairs = split.chats, split.pairs
    requests, scored = split.chat_requests, split.pair_requests
    chat_keys = [k for w in chats for k in w.keys] if keyed else None
    pair_keys = [k for w in pairs for k in w.keys] if keyed else None
    answers: list[Generation] = []
    likelihoods: list[Loglikelihood] = []
    answered = Answered(ctx, items=len(chats), chats=len(requests))
    if chats and pairs:  # both kinds in one chunk: asked side by side
        answers, likelihoods = await asyncio.gather(
            counted(model.generate(requests, keys=chat_keys), answered.item),
            counted(model.loglikelihood(scored, keys=pair_keys), answered.half),
        )
    elif chats:  # awaited directly: a backend that answers at once lets the chunk run through
        with counting(answered.item):
            answers = await model.generate(requests, keys=chat_keys)
    elif pairs:
        with counting(answered.half):
            likelihoods = await model.loglikelihood(scored, keys=pair_keys)
    at = 0
    for entry in chats:
        size = len(entry.chats())
        entry.answered(answers[at : at + size])
        at += size
    for at, entry in enumerate(pairs):
        entry.likelihoods = (likelihoods[2 * at], likelihoods[2 * at + 1])


class Answered:
    """Counts a chunk's items as their answers arrive.

    A chat answer is an item, or a share of one where an item asks several (a minimal pair
    asked as a forced choice asks two, one per order); two scored sentences (a minimal pair's
    log-probabilities) are one.
    """

    def __init__(self, ctx: EvalContext, items: int = 0, chats: int = 0) -> None:
        self.ctx = ctx
        self.sentences = 0
        self.items, self.chats = items, max(chats, 1)
        self.chat_answers = self.counted = 0

    def item(self, count: int) -> None:
        """`count` chat answers arrived."""
        self.chat_answers += count
        done = self.chat_answers * self.items // self.chats
        if done > self.counted:
            self.ctx.tally("answered", done - self.counted)
            self.counted = done

    def half(self, count: int) -> None:
        """`count` sentences of minimal pairs were scored."""
        self.sentences += count
        pairs, self.sentences = divmod(self.sentences, 2)
        if pairs:
            self.ctx.tally("answered", pairs)


async def counted(job: Awaitable[T], counter: Callable[[int], None]) -> T:
    """`job`'s result, its answers counted by `counter` as they arrive."""
    with counting(counter):
        return await job


async def answer(chunk: ChunkState, config: RunnableConfig) -> dict[str, Any]:
    """One chunk: model, then the judge (only when some task is judged), then score.

    The steps run in one graph node, one `Send` per chunk: as a subgraph they cost LangGraph's
    per-step bookkeeping for every step of every chunk (bench/graph.py).
    """
    ctx = _context(config)
    if STOP.requested:  # stopping: no chunk starts (its items are not asked)
        return {"answered": 0}
    planned = "work" in chunk
    work = chunk["work"] if planned else _render(chunk["items"], ctx)
    await generate(work, ctx, keyed=planned)  # each answer counted as it arrives
    asked = [entry for entry in work if not entry.not_asked]  # all of them but on a stop
    await judge_answers(asked, ctx)  # each verdict counted as it arrives
    asked = [entry for entry in asked if not entry.not_asked]
    scored = ChunkScorer(ctx).score(asked)
    ctx.advance(steps_of((entry.item for entry in asked), len(asked), ctx))
    if planned:  # the plan's work lives as long as the run: its answers must not
        for entry in work:
            entry.forget_answer()
    return {"answered": scored}


async def report(state: EvalState, config: RunnableConfig) -> dict[str, Any]:
    """Rewrite the summary and report from everything recorded so far."""
    write = _context(config).report
    if write is not None:
        write()
    return {}


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
