"""What an agent is, how the build graph calls it, and the registry of agents."""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..models.model import Model
from ..plugins import Registry
from ..records import GenParams, GrammarPoint, Instance
from ..templates import PromptTemplate, load_prompt


class NoOptions(BaseModel):
    """An agent without options of its own."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class AgentContext:
    """What an agent node hands its agent: the model, the prompt and the decoding."""

    model: Model
    prompt: str
    """Template name; `{language}` in it becomes `zh` or `en` by the point's language."""
    params: GenParams
    max_reasks: int
    options: BaseModel = field(default_factory=NoOptions)

    def template(self, language: str) -> PromptTemplate:
        """The prompt template for a point's language."""
        return load_prompt(self.prompt.format(language="zh" if language == "zh" else "en"))


@dataclass
class AgentResult:
    """Instances an agent created or updated, and one outcome label for the build's tallies."""

    instances: list[Instance]
    outcome: str
    failure: str | None = None
    """Why the agent produced nothing usable, when it did not."""


AgentTask = dict[str, Any]
"""One call of an agent: `point` always, plus `instance` or `index` as the agent plans."""
AgentFn = Callable[[AgentTask, AgentContext], Awaitable[AgentResult]]
Planner = Callable[[list[GrammarPoint], list[Instance], BaseModel], list[AgentTask]]


@dataclass(frozen=True)
class AgentSpec:
    """A registered agent."""

    name: str
    run: AgentFn
    plan: Planner
    """The calls to make, given the points, the instances so far and the node's options."""
    options: type[BaseModel] = NoOptions
    description: str = ""


def per_instance(selects: Callable[[Instance], bool]) -> Planner:
    """A planner calling the agent once for each instance `selects` accepts."""

    def plan(
        points: list[GrammarPoint], instances: list[Instance], options: BaseModel
    ) -> list[AgentTask]:
        by_id = {p.id: p for p in points}
        return [
            {"instance": i, "point": by_id[i.point_id]}
            for i in instances
            if selects(i) and i.point_id in by_id
        ]

    return plan


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
