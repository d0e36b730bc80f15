"""Turn a recipe into the build graph: one graph for every recipe.

    (reader) → node 1 → node 2 → … → banks

The reader's records and counts are the graph's initial state. An agent node is
`prepare-<name>`, which plans its calls and fans them out with `Send` (one task per call; the
model behind the agent bounds and batches the requests), the fanned-out `<name>` tasks, and a
`finish-<name>` step when the agent has one; with agents off it is a node running the
agent's `offline` step, then its `finish-<name>` step. Nodes return updates, which the state's
reducers (`Annotated` channels) merge. A filter node runs once over the whole set. The
`banks` node runs the recipe's deterministic bank builder. The next node starts once every task
of the previous one has finished; as it starts, it reports the stages that finished before it
(their counts and time) to the build's progress, and the banks node reports itself.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import BaseModel

from ..agents.base import AgentContext, AgentSpec, AgentTask
from ..progress import ProgressSink, SilentProgress, stage_line
from ..records import Item
from ..tasks.registry import BankBuilderSpec, BuildResources
from .nodes import (
    BuildFailure,
    BuildView,
    FilterSpec,
    NodeEnv,
    NodeUpdate,
    merge_flags,
    merge_records,
    merge_tallies,
)


class BuildState(TypedDict, total=False):
    """State of a build."""

    records: Annotated[dict[str, BaseModel], merge_records]
    flags: Annotated[dict[str, list[str]], merge_flags]
    tallies: Annotated[dict[str, dict[str, int]], merge_tallies]
    failures: Annotated[list[BuildFailure], operator.add]
    items: list[Item]


@dataclass
class AgentStage:
    """An agent node of the recipe, ready to run (`context` is None with agents off)."""

    name: str
    spec: AgentSpec
    options: BaseModel
    context: AgentContext | None


@dataclass
class FilterStage:
    """A filter node of the recipe, ready to run."""

    name: str
    spec: FilterSpec
    options: BaseModel


Stage = AgentStage | FilterStage


@dataclass
class BuildContext:
    """Everything the nodes need besides the state."""

    stages: list[Stage]
    builder_name: str
    builder: BankBuilderSpec
    builder_options: BaseModel
    tasks: dict[str, BaseModel]
    resources: BuildResources
    env: NodeEnv
    source_context: dict[str, Any] = field(default_factory=dict)
    progress: ProgressSink = field(default_factory=SilentProgress)
    started: dict[str, float] = field(default_factory=dict)
    """When each stage began (monotonic seconds), for the line that says it finished."""
    reported: set[str] = field(default_factory=set)
    """Stages whose counts have been reported."""


def _context(config: RunnableConfig) -> BuildContext:
    return config["configurable"]["build"]  # type: ignore[no-any-return]


def view_of(state: BuildState, ctx: BuildContext) -> BuildView:
    """What nodes see of the state."""
    return BuildView(
        records=state.get("records", {}),
        context=ctx.source_context,
        flags=state.get("flags", {}),
    )


def _plan(stage: AgentStage, state: BuildState, config: RunnableConfig) -> Sequence[AgentTask]:
    return stage.spec.plan(view_of(state, _context(config)), stage.options)


def _prepare_node(stage: AgentStage) -> Callable[..., Any]:
    async def prepare(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
        planned = len(_plan(stage, state, config))
        _context(config).progress.start(f"{stage.name} ({stage.spec.name})", planned)
        counts = dict.fromkeys(stage.spec.outcomes, 0)
        if stage.spec.planned is not None:
            counts = {stage.spec.planned: planned, **counts}
        return {"tallies": {stage.name: counts}} if counts else {}

    return prepare


def _dispatch(stage: AgentStage, after: str) -> Callable[..., list[Send] | str]:
    def dispatch(state: BuildState, config: RunnableConfig) -> list[Send] | str:
        return [Send(stage.name, task) for task in _plan(stage, state, config)] or after

    return dispatch


def _agent_node(stage: AgentStage) -> Callable[..., Any]:
    async def run(task: AgentTask, config: RunnableConfig) -> dict[str, Any]:
        assert stage.context is not None
        result = await stage.spec.run(task, stage.context)
        outcome = {result.outcome: 1} if result.outcome is not None else {}
        _context(config).progress.advance(1, **outcome)
        update = NodeUpdate(records=result.records, removed=result.removed, flags=result.flags)
        if result.outcome is not None:
            update.counts = {result.outcome: 1}
        state = update.state(stage.name)
        if result.failure is not None:
            failure = BuildFailure(
                stage.name,
                result.failure,
                agent=stage.spec.name,
                subject=task.described(),
                details=dict(result.details),
            )
            state["failures"] = [failure]
        return state

    return run


def _finish_node(stage: AgentStage) -> Callable[..., Any]:
    async def finish(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
        assert stage.spec.finish is not None
        ctx = _context(config)
        update = await stage.spec.finish(view_of(state, ctx), stage.options, ctx.env)
        return update.state(stage.name)

    return finish


def _offline_node(stage: AgentStage) -> Callable[..., Any]:
    """The agent's step with `--agents off` (its `finish` follows as a node of its own)."""

    async def offline(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
        if stage.spec.offline is None:
            return {}
        return stage.spec.offline(view_of(state, _context(config)), stage.options).state(stage.name)

    return offline


def _filter_node(stage: FilterStage) -> Callable[..., Any]:
    async def run(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
        ctx = _context(config)
        update = await stage.spec.run(view_of(state, ctx), stage.options, ctx.env)
        return update.state(stage.name)

    return run


def _report_finished(ctx: BuildContext, tallies: dict[str, dict[str, int]], now: str) -> None:
    """Say what every stage before `now` counted, once each (the reader's too)."""
    for stage, counts in tallies.items():
        if stage == now or stage in ctx.reported:
            continue
        ctx.reported.add(stage)
        began = ctx.started.get(stage)
        ctx.progress.note(
            stage_line(stage, counts, None if began is None else time.monotonic() - began)
        )


def _entry_of(name: str, node: Callable[..., Any], announce: bool = True) -> Callable[..., Any]:
    """`node`, first reporting the finished stages and starting `name`'s clock.

    With `announce`, the stage shows as running until it reports its counts (an agent stage
    starts its own phase, with its planned calls, instead).
    """

    async def run(state: BuildState, config: RunnableConfig) -> Any:
        ctx = _context(config)
        _report_finished(ctx, state.get("tallies", {}), name)
        ctx.started[name] = time.monotonic()
        if announce:
            ctx.progress.start(name, 0)
        return await node(state, config)

    return run


async def banks(state: BuildState, config: RunnableConfig) -> dict[str, Any]:
    """Assemble the banks."""
    ctx = _context(config)
    resources = replace(ctx.resources, counts={})
    items = ctx.builder.build(view_of(state, ctx), ctx.tasks, ctx.builder_options, resources)
    counts = {"items": len(items), **resources.counts}
    _report_finished(ctx, {ctx.builder_name: counts}, "")
    return {"items": items, "tallies": {ctx.builder_name: counts}}


def _add_agent(graph: StateGraph, stage: AgentStage, previous: str, after: str) -> str:
    """Wire an agent stage after `previous`; returns the node the next stage follows."""
    finish = f"finish-{stage.name}" if stage.spec.finish is not None else None
    if stage.context is None:  # agents off: the offline step, then the finish step
        graph.add_node(stage.name, _entry_of(stage.name, _offline_node(stage)))
        graph.add_edge(previous, stage.name)
        if finish is None:
            return stage.name
        graph.add_node(finish, _finish_node(stage))
        graph.add_edge(stage.name, finish)
        return finish
    prepare = f"prepare-{stage.name}"
    graph.add_node(prepare, _entry_of(stage.name, _prepare_node(stage), announce=False))
    graph.add_node(stage.name, _agent_node(stage))
    graph.add_edge(previous, prepare)
    target = finish or after
    graph.add_conditional_edges(prepare, _dispatch(stage, target), [stage.name, target])
    if finish is None:
        return stage.name
    graph.add_node(finish, _finish_node(stage))
    graph.add_edge(stage.name, finish)
    return finish


def _entry(stage: Stage) -> str:
    """The first node of a stage (what the previous stage's fan-out falls through to)."""
    if isinstance(stage, AgentStage) and stage.context is not None:
        return f"prepare-{stage.name}"
    return stage.name


def build_graph(stages: list[Stage], builder: str = "banks") -> Any:
    """The compiled build graph for a recipe's stages and its builder node's name."""
    graph = StateGraph(BuildState)
    graph.add_node(builder, _entry_of(builder, banks))
    previous = START
    for position, stage in enumerate(stages):
        after = _entry(stages[position + 1]) if position + 1 < len(stages) else builder
        if isinstance(stage, AgentStage):
            previous = _add_agent(graph, stage, previous, after)
        else:
            graph.add_node(stage.name, _entry_of(stage.name, _filter_node(stage)))
            graph.add_edge(previous, stage.name)
            previous = stage.name
    graph.add_edge(previous, builder)
    graph.add_edge(builder, END)
    return graph.compile()
