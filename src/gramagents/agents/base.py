"""What an agent is, how the build graph calls it, and the registry of agents."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ..models.model import Model, Structured
from ..plugins import Registry
from ..records import ChatRequest, GenParams, GrammarPoint, Instance, Provenance, SourceRef
from ..templates import PromptTemplate, load_prompt
from ..workflow.nodes import BuildView, NodeEnv, NodeUpdate, NoOptions

S = TypeVar("S", bound=BaseModel)
"""The schema an agent asks its model for."""


def prompt_name(prompt: str, language: str) -> str:
    """The prompt file a node's `prompt` names for `language` (`{language}` in it replaced).

    Only `{language}` is a placeholder: other braces are part of the name, so a name that is
    no file is reported as not found rather than failing to format.
    """
    return prompt.replace("{language}", language)


@dataclass
class AgentContext:
    """What an agent node hands its agent: the model, the prompt and the decoding."""

    model: Model
    prompt: str
    """Template name; `{language}` in it becomes the point's language (see `languages`)."""
    params: GenParams
    max_reasks: int
    options: BaseModel = field(default_factory=NoOptions)
    languages: tuple[str, ...] = ("en",)
    """The recipe's prompt languages; a point in another language gets the first's prompt."""

    def template(self, language: str) -> PromptTemplate:
        """The prompt template for a point's language."""
        chosen = language if language in self.languages else self.languages[0]
        return load_prompt(prompt_name(self.prompt, chosen))

    async def ask(
        self,
        template: PromptTemplate,
        variables: dict[str, Any],
        schema: type[S],
        *,
        sample: int | None = None,
        context: dict[str, Any] | None = None,
    ) -> Structured[S]:
        """The agent's model asked for a `schema` object by `template` filled with `variables`.

        `sample` numbers one of several answers to the same prompt: it seeds the decoding and
        keeps the answers apart in the cache. The validators see `context` and the `prompt`
        (the last message sent), re-asked at most `max_reasks` times.
        """
        messages = template.render(variables)
        params = self.params if sample is None else self.params.model_copy(update={"seed": sample})
        request = ChatRequest(
            messages=messages, params=params, prompt_hash=template.hash, sample=sample or 0
        )
        context = {"prompt": messages[-1].content, **(context or {})}
        return await self.model.structured(
            request, schema, context=context, max_reasks=self.max_reasks
        )

    def made_by(
        self, agent: str, template: PromptTemplate, source: list[SourceRef] | None = None
    ) -> Provenance:
        """The provenance of what `agent` wrote here: its name, this model, the prompt's hash."""
        return Provenance(
            source=list(source or []),
            agent=agent,
            model=self.model.label,
            prompt_hash=template.hash,
        )


@dataclass
class AgentResult:
    """Records an agent created or changed, and one outcome label for the build's tallies."""

    records: list[BaseModel]
    outcome: str | None
    """Counted in the node's tally (None: not counted)."""
    failure: str | None = None
    """Why the agent produced nothing usable, when it did not."""
    removed: list[str] = field(default_factory=list)
    """Ids of records that leave the build (e.g. one the agent replaced by a new record)."""
    flags: dict[str, list[str]] = field(default_factory=dict)
    """Reasons to send records to human review."""
    details: dict[str, Any] = field(default_factory=dict)
    """What the failure record says besides the task and the reason."""


@dataclass(frozen=True, slots=True)
class AgentTask:
    """One call of an agent, as its planner made it: a subclass names what the call works on.

    A failed call's record names the task by its fields (`described`).
    """

    def described(self) -> dict[str, Any]:
        """The task's fields as a failure record names them (records, and lists of them, by id)."""
        return {f.name: _reference(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class InstanceTask(AgentTask):
    """A call about one instance of a grammar point."""

    instance: Instance
    point: GrammarPoint


@dataclass(frozen=True, slots=True)
class PointTask(AgentTask):
    """The `index`-th call about a grammar point (e.g. the index-th sentence to make)."""

    point: GrammarPoint
    index: int


def _reference(value: Any) -> Any:
    """How a task's value is named in a failure record (records, and lists of them, by id)."""
    if isinstance(value, BaseModel) and hasattr(value, "id"):
        return value.id
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, BaseModel) and hasattr(v, "id") for v in value)
    ):
        return [v.id for v in value]  # type: ignore[attr-defined]
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


TaskT = TypeVar("TaskT", bound=AgentTask)
AgentFn = Callable[[TaskT, AgentContext], Awaitable[AgentResult]]
"""An agent's call: its own kind of `AgentTask`, and the node's context."""
Planner = Callable[[BuildView, BaseModel], Sequence[TaskT]]
Offline = Callable[[BuildView, BaseModel], NodeUpdate]
Finish = Callable[[BuildView, BaseModel, NodeEnv], Awaitable[NodeUpdate]]


@dataclass(frozen=True)
class AgentSpec(Generic[TaskT]):
    """A registered agent, over its own kind of task."""

    name: str
    run: AgentFn[TaskT]
    plan: Planner[TaskT]
    """The calls to make, given the build so far and the node's options."""
    options: type[BaseModel] = NoOptions
    description: str = ""
    planned: str | None = "planned"
    """The tally key counting the planned calls (None: not counted)."""
    outcomes: tuple[str, ...] = ()
    """Outcome keys the node's tally shows even when none occurred."""
    offline: Offline | None = None
    """What the node does with `--agents off` (by default, nothing)."""
    finish: Finish | None = None
    """A step over the whole set after every call has returned (with agents on or off)."""


def per_instance(selects: Callable[[Instance], bool]) -> Planner[InstanceTask]:
    """A planner calling the agent once for each instance `selects` accepts."""

    def plan(view: BuildView, options: BaseModel) -> list[InstanceTask]:
        by_id: dict[str, GrammarPoint] = view.context.get("points", {})
        return [
            InstanceTask(i, by_id[i.point_id])
            for i in view.of_type(Instance)
            if selects(i) and i.point_id in by_id
        ]

    return plan


def points_of(view: BuildView) -> list[GrammarPoint]:
    """The grammar points of a build whose source is a list of points, in order."""
    return list(view.context.get("points", {}).values())


def calls_to_reach(view: BuildView, kind: str, wanted: int) -> list[PointTask]:
    """Calls that bring every grammar point to `wanted` accepted instances of `kind`.

    A point that has some already (from its source, or a resumed build) gets fewer calls;
    each task carries the `point` and the call's `index` (a seed and a sample number).
    """
    have = Counter(
        i.point_id for i in view.of_type(Instance) if i.kind == kind and i.status == "accepted"
    )
    return [
        PointTask(point, index)
        for point in points_of(view)
        for index in range(max(0, wanted - have[point.id]))
    ]


AGENTS: Registry[AgentSpec] = Registry("agent")


def agent(spec: AgentSpec) -> AgentSpec:
    """Register an agent."""
    return AGENTS.register(spec.name, spec)


def agents_in(names: list[str], module: str) -> None:
    """Announce that importing `module` registers the agents `names`."""
    for name in names:
        AGENTS.announce(name, module)


def get_agent(name: str) -> AgentSpec | None:
    """The agent called `name`, if any."""
    return AGENTS.get(name)


def known_agents() -> list[str]:
    """Names of registered agents."""
    return AGENTS.names()


def normalise(text: str) -> str:
    """Text compared without case, width, spaces or punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] in "LN")


def point_vars(point: GrammarPoint) -> dict[str, Any]:
    """Template variables describing a grammar point."""
    return {
        "point": point.label(),
        "category": point.category,
        "name": point.name,
        "description": point.description,
        "level": point.level,
    }
