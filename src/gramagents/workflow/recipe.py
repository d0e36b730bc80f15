"""Recipes: `graphs/*.yaml` files that name the nodes of a build graph and their parameters.

A recipe names its source reader, lists agent nodes (each fanned out over what it applies to)
and filter nodes (each run once over the whole set) in the order they run, and ends with one
bank-builder node. Every key is checked: an unknown key, reader, agent, filter, builder, task
or prompt is one error line naming the file, the line and the field.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
)

from .. import resources
from ..agents import get_agent, known_agents
from ..agents.base import prompt_name
from ..errors import GramagentsError, InputError
from ..extras import require
from ..records import GenParams
from ..resources import recipe_path
from ..sources import SOURCES, _text
from ..tasks.registry import get_builder, known_builders
from .nodes import FILTERS
from .review import REVIEWS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AgentDefaults(_Strict):
    """Defaults for every agent node."""

    model: str = "smollm2"
    """Model spec the agents run on (the command's `--agent-model` overrides it)."""
    max_reasks: int = Field(default=2, ge=0)
    """How often an invalid structured answer is sent back to the model."""


class ReviewSettings(_Strict):
    """The human-review file a build writes.

    CPG-EVAL §3.2.2 and §3.3: teachers screen and revise the generated sentences.
    """

    kind: str = "instances"
    """What is reviewed: `instances` (generated sentences) or a kind a recipe registers."""
    sample: int = Field(default=10, ge=0)
    """Accepted generated sentences sampled into the review file, beside every flagged one."""
    format: Literal["csv", "jsonl"] = "csv"


class Decoding(_Strict):
    """Decoding parameters of an agent node."""

    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=96, ge=1)

    def gen_params(self) -> GenParams:
        """As the records' decoding parameters."""
        return GenParams(temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens)


class AgentNode(_Strict):
    """A node that runs one agent over the instances it applies to."""

    name: str
    agent: str
    """Registered agent name, e.g. `instance-rewriter`."""
    prompt: str
    """Template under `prompts/`; `{language}` becomes the point's language, one of the
    recipe's `languages`."""
    model: str | None = None
    params: Decoding = Decoding()
    max_reasks: int | None = Field(default=None, ge=0)
    options: dict[str, Any] = Field(default_factory=dict)


class FilterNode(_Strict):
    """A node that runs once over the whole set of records."""

    name: str
    filter: str
    """Registered filter, e.g. `minhash-dedup`."""
    options: dict[str, Any] = Field(default_factory=dict)


class SourceNode(_Strict):
    """The reader of `--source`, with its options."""

    reader: str
    """Registered source reader, e.g. `grammar-table`."""
    options: dict[str, Any] = Field(default_factory=dict)


class BuilderNode(_Strict):
    """The node that assembles banks from the checked instances."""

    name: str
    builder: str
    """Registered bank builder, e.g. `cpg`."""
    options: dict[str, Any] = Field(default_factory=dict)
    tasks: dict[str, dict[str, Any] | None]
    """Banks to build, each with its parameters."""


def _node_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        for kind in ("agent", "filter", "builder"):
            if kind in value:
                return kind
    return None


Node = Annotated[
    Annotated[AgentNode, Tag("agent")]
    | Annotated[FilterNode, Tag("filter")]
    | Annotated[BuilderNode, Tag("builder")],
    Discriminator(
        _node_kind,
        custom_error_type="node_kind",
        custom_error_message="a node needs an 'agent', a 'filter' or a 'builder' key",
    ),
]


class Recipe(_Strict):
    """A build recipe."""

    recipe: str
    """The recipe's name, e.g. `cpg`."""
    description: str = ""
    paper: str = ""
    source: str | SourceNode
    """Registered reader of `--source`, e.g. `grammar-table` (CPG) or `grammar-items` (GEC),
    or `{reader: NAME, options: {...}}`."""
    seed: int = 1234
    languages: list[str] = Field(default=["en"], min_length=1)
    """The languages the agents' prompts are written in (`{language}` in a prompt's name): a
    point in one of them gets its prompt, any other point the first's."""
    agents: AgentDefaults = AgentDefaults()
    review: ReviewSettings = ReviewSettings()
    judges: list[str] = Field(default_factory=list)
    """The jury (model specs) that judges the open answers of the datasets this recipe builds,
    when an eval names none (`--judge-model`); empty: the embedded default judge."""
    nodes: list[Node] = Field(min_length=1)

    @property
    def reader(self) -> SourceNode:
        """The source reader and its options."""
        return (
            self.source if isinstance(self.source, SourceNode) else SourceNode(reader=self.source)
        )

    @property
    def agent_nodes(self) -> list[AgentNode]:
        """Agent nodes, in order."""
        return [n for n in self.nodes if isinstance(n, AgentNode)]

    @property
    def filter_nodes(self) -> list[FilterNode]:
        """Filter nodes, in order."""
        return [n for n in self.nodes if isinstance(n, FilterNode)]

    @property
    def builder(self) -> BuilderNode:
        """The bank-builder node."""
        return next(n for n in self.nodes if isinstance(n, BuilderNode))


_ALL_KEYS = sorted(
    {
        k
        for m in (
            Recipe,
            AgentDefaults,
            ReviewSettings,
            Decoding,
            AgentNode,
            FilterNode,
            SourceNode,
            BuilderNode,
        )
        for k in m.model_fields
    }
)


class RecipeChecker:
    """Turns problems found in a parsed recipe into located InputErrors."""

    def __init__(self, path: Path, data: Any, lines: dict[Any, int]) -> None:
        self.path = path
        self.data = data
        self.lines = lines

    def fail(self, loc: tuple[Any, ...], message: str) -> InputError:
        """An error located at `loc` (a path of keys and indexes into the recipe)."""
        line, field = _text.locate(self.data, self.lines, loc)
        return InputError(self.path, message, line=line, field=field or None)

    def from_validation(self, exc: ValidationError, prefix: tuple[Any, ...] = ()) -> InputError:
        """The most telling error of a pydantic ValidationError, located."""
        # An unknown key usually explains the other errors (a misspelt key is also "missing").
        errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
        error = errors[0]
        loc = prefix + tuple(error["loc"])
        if len(loc) > 2 and loc[0] == "nodes" and loc[2] in ("agent", "filter", "builder"):
            loc = loc[:2] + loc[3:]  # drop the union tag pydantic inserts
        if error["type"] == "extra_forbidden":
            key = str(loc[-1])
            close = difflib.get_close_matches(key, _ALL_KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            return self.fail(loc, f"unknown key{hint}")
        if error["type"] == "missing":
            return self.fail(loc[:-1], f"missing key '{loc[-1]}'")
        return self.fail(loc, error["msg"])


def load_recipe(name_or_path: str) -> tuple[Recipe, Path]:
    """Load and check a recipe given as a path or a name (`cpg` means `graphs/cpg.yaml`)."""
    path = recipe_path(name_or_path)
    data, lines = _text.load_yaml_with_lines(path, _text.read_utf8(path))
    checker = RecipeChecker(path, data, lines)
    if not isinstance(data, dict):
        raise InputError(path, "a recipe is a YAML mapping", line=1)
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise checker.from_validation(exc) from None
    _check_semantics(recipe, checker)
    return recipe, path


def _check_semantics(recipe: Recipe, checker: RecipeChecker) -> None:
    reader = recipe.reader.reader
    if SOURCES.get(reader) is None:
        where = ("source", "reader") if isinstance(recipe.source, SourceNode) else ("source",)
        raise checker.fail(
            where, f"unknown source reader '{reader}' (known: {', '.join(SOURCES.names())})"
        )
    if REVIEWS.get(recipe.review.kind) is None:
        raise checker.fail(
            ("review", "kind"),
            f"unknown review kind '{recipe.review.kind}' (known: {', '.join(REVIEWS.names())})",
        )
    names: set[str] = set()
    builders = [i for i, n in enumerate(recipe.nodes) if isinstance(n, BuilderNode)]
    if len(builders) != 1 or builders[0] != len(recipe.nodes) - 1:
        raise checker.fail(("nodes",), "the last node, and only it, must be a bank builder")
    for index, node in enumerate(recipe.nodes):
        if node.name in names:
            raise checker.fail(("nodes", index, "name"), f"node name '{node.name}' is used twice")
        names.add(node.name)
        if isinstance(node, AgentNode):
            _check_agent(node, index, checker, recipe.languages)
        elif isinstance(node, FilterNode):
            _check_filter(node, index, checker)
        else:
            _check_builder(node, index, checker)


def agent_prompts(node: AgentNode, languages: list[str]) -> dict[str, str]:
    """An agent node's prompt files by language (one, keyed "", without `{language}`)."""
    if "{language}" not in node.prompt:
        return {"": node.prompt}
    return {language: prompt_name(node.prompt, language) for language in languages}


def _check_agent(node: AgentNode, index: int, checker: RecipeChecker, languages: list[str]) -> None:
    spec = get_agent(node.agent)
    if spec is None:
        raise checker.fail(
            ("nodes", index, "agent"),
            f"unknown agent '{node.agent}' (known: {', '.join(known_agents())})",
        )
    for language, prompt in agent_prompts(node, languages).items():
        try:
            resources.find("prompts", prompt)
        except GramagentsError:
            where = f" for language '{language}'" if language else ""
            raise checker.fail(
                ("nodes", index, "prompt"), f"prompt '{node.prompt}' not found{where}"
            ) from None
    try:
        spec.options.model_validate(node.options)
    except ValidationError as exc:
        raise checker.from_validation(exc, ("nodes", index, "options")) from None


def _check_filter(node: FilterNode, index: int, checker: RecipeChecker) -> None:
    spec = FILTERS.get(node.filter)
    if spec is None:
        raise checker.fail(
            ("nodes", index, "filter"),
            f"unknown filter '{node.filter}' (known: {', '.join(FILTERS.names())})",
        )
    try:
        spec.options.model_validate(node.options)
    except ValidationError as exc:
        raise checker.from_validation(exc, ("nodes", index, "options")) from None


def _check_builder(node: BuilderNode, index: int, checker: RecipeChecker) -> None:
    spec = get_builder(node.builder)
    if spec is None:
        raise checker.fail(
            ("nodes", index, "builder"),
            f"unknown bank builder '{node.builder}' (known: {', '.join(known_builders())})",
        )
    if spec.extra is not None:
        require(spec.extra, spec.extra)  # a recipe and its extra share the name
    try:
        spec.options.model_validate(node.options)
    except ValidationError as exc:
        raise checker.from_validation(exc, ("nodes", index, "options")) from None
    if not node.tasks:
        raise checker.fail(("nodes", index, "tasks"), "name at least one task")
    for task_name, params in node.tasks.items():
        model = spec.task_params.get(task_name)
        if model is None:
            raise checker.fail(
                ("nodes", index, "tasks", task_name),
                f"unknown task '{task_name}' for builder '{node.builder}' "
                f"(known: {', '.join(spec.task_params)})",
            )
        try:
            model.model_validate(params or {})
        except ValidationError as exc:
            raise checker.from_validation(exc, ("nodes", index, "tasks", task_name)) from None
