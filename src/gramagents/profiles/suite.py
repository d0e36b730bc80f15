"""Suites: `suites/*.yaml` files naming what a profile evaluates and which competence each task is.

A suite lists *entries*, each a build (a recipe run on a source) or a dataset (a file or folder
read by an eval format), with the items per task its eval asks, and maps tasks to
*competences*. A competence is a list of tasks, or `{tasks: [...], methods: [...]}` naming the
methods its minimal pairs may be asked by, in the order preferred (`loglik`: log-probabilities
compared; `choice`: a forced choice in both orders, scored as `TASK-CHOICE`); the list form
accepts `loglik` only. Every key is checked: an unknown key, task, format or method, a task in
two competences or one whose score is not a share of [0, 1] is one error line naming the file,
the line and the field.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import resources
from ..errors import GramagentsError, InputError
from ..sources import _text
from ..tasks import get_task
from ..tasks.registry import CHOICE_SUFFIX

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
"""Entry names: they name folders of the profile (`builds/NAME`, `evals/NAME`)."""
UNBOUNDED = frozenset({"rmse", "abs_error"})
"""Headline metrics that are errors, not shares: no chance correction pools them."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class BuildSpec(_Strict):
    """A dataset the profile builds (`gramagents build RECIPE --source SOURCE`)."""

    recipe: str
    """Recipe name (`cpg`) or path."""
    source: str | None = None
    """The source the recipe reads; empty: the user names it (`--source ENTRY=PATH`)."""
    agents: bool = False
    """Run the recipe's agents (a capable `--agent-model`), or build from the source as it is."""
    limit: int | None = Field(default=None, ge=1)
    """Read only the first N units of the source (the build's `--limit`)."""


class DatasetSpec(_Strict):
    """A dataset the profile reads as it is (`gramagents eval PATH --format FORMAT`)."""

    path: str | None = None
    """File or folder; empty: the user names it (`--source ENTRY=PATH`)."""
    format: str = "gramagents"
    """An eval format: gramagents, parquet, hf, cpg-eval, blimp, climp."""
    answers: str | None = None
    """Gold answers for items the dataset has none for (the eval's `--answers`)."""


class Entry(_Strict):
    """One dataset of a suite and how much of it the profile asks."""

    build: BuildSpec | None = None
    dataset: DatasetSpec | None = None
    limit: int | None = Field(default=None, ge=1)
    """Items per task evaluated (the eval's `--limit`); the profile's `--limit` overrides it."""
    points: str | None = None
    """Namespace of the items' grammar-point ids (default: the entry's name). Entries that name
    one namespace share their points: their items are joined by point id."""
    point_key: str = "point"
    """The item metadata key that holds the grammar-point id (`UID` for BLiMP, `paradigm` for
    CLiMP); it must be one the eval keeps in its score records."""
    optional: bool = False
    """Leave the entry out when its source is not given, instead of stopping."""

    @model_validator(mode="after")
    def _one_kind(self) -> Entry:
        if (self.build is None) == (self.dataset is None):
            raise ValueError("an entry is either a build or a dataset: give one of them")
        return self

    @property
    def location(self) -> str | None:
        """The source or dataset path the suite gives (None: the user names it)."""
        return self.build.source if self.build is not None else self.dataset.path  # type: ignore[union-attr]


Method = Literal["loglik", "choice"]


class Competence(_Strict):
    """What measures a competence: its tasks, and how their minimal pairs may be asked."""

    tasks: list[str]
    """The tasks whose items measure it."""
    methods: list[Method] = Field(default_factory=lambda: ["loglik"], min_length=1)
    """How its minimal-pair tasks may be asked, the preferred first: a profile uses the first
    the model supports (`loglik` needs prompt log-probabilities; `choice` any model)."""

    def pair_tasks(self) -> list[str]:
        """Its minimal-pair tasks (scored by log-probabilities unless asked otherwise)."""
        return [t for t in self.tasks if (spec := get_task(t)) and spec.mode == "loglikelihood"]

    def counted(self) -> list[str]:
        """Every task whose items count for it.

        Its own, and the forced-choice forms of its minimal-pair tasks when it accepts `choice`.
        """
        extra = [t + CHOICE_SUFFIX for t in self.pair_tasks()] if "choice" in self.methods else []
        return [*self.tasks, *extra]


class Suite(_Strict):
    """A suite file."""

    suite: str
    """The suite's name."""
    description: str = ""
    entries: dict[str, Entry] = Field(min_length=1)
    """Entry name to entry, in the order they are built and evaluated."""
    competences: dict[str, Competence] = Field(min_length=1)
    """Competence to what measures it (a list of tasks is its `tasks`), in the order the
    profile shows them."""
    judges: list[str] = Field(default_factory=list)
    """The jury (model specs) that judges the suite's open answers when the command names
    none (`--judge`); empty: the eval's default."""

    @field_validator("competences", mode="before")
    @classmethod
    def _lists_are_tasks(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {"tasks": v} if isinstance(v, list) else v for k, v in value.items()}
        return value

    def competence_of(self) -> dict[str, str]:
        """Task to the competence it counts for (forced-choice forms included)."""
        return {task: name for name, c in self.competences.items() for task in c.counted()}

    def counted(self) -> dict[str, list[str]]:
        """Competence to every task whose items count for it (as profiles record it)."""
        return {name: c.counted() for name, c in self.competences.items()}

    def methods(self) -> dict[str, list[str]]:
        """Competence to the methods its minimal pairs may be asked by (those that have some)."""
        return {name: list(c.methods) for name, c in self.competences.items() if c.pair_tasks()}


def suite_path(name_or_path: str) -> Path:
    """The file of a suite given as a path or a name (`zh-pedagogy`: `suites/zh-pedagogy.yaml`)."""
    candidate = Path(name_or_path)
    if candidate.is_file():
        return candidate
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path:
        raise InputError(candidate, "no such suite file")
    known = available_suites()
    if name_or_path not in known:
        close = difflib.get_close_matches(name_or_path, known, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise GramagentsError(
            f"unknown suite '{name_or_path}' ({hint}known: {', '.join(known)}; or a suite "
            "file's path, e.g. suites/en-syntax.yaml)"
        )
    return resources.find("suites", f"{name_or_path}.yaml")


def available_suites() -> list[str]:
    """Names of the suites in the suite folders (the working directory's and the package's)."""
    return sorted(
        {path.stem for root in resources.search_roots("suites") for path in root.glob("*.yaml")}
    )


def load_suite(name_or_path: str) -> tuple[Suite, Path]:
    """Load and check a suite; the suite and its file."""
    path = suite_path(name_or_path)
    data, lines = _text.load_yaml_with_lines(path, _text.read_utf8(path))
    if not isinstance(data, dict):
        raise InputError(path, "a suite is a YAML mapping", line=1)
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise _located(path, data, lines, exc) from None
    _check(suite, path, data, lines)
    return suite, path


def entry_error(path: Path, name: str, message: str) -> InputError:
    """An error about an entry of the suite file `path`, at the entry's line."""
    data, lines = _text.load_yaml_with_lines(path, _text.read_utf8(path))
    return _at(path, data, lines, ("entries", name), message)


_KEYS = sorted(
    {k for m in (Suite, Entry, BuildSpec, DatasetSpec, Competence) for k in m.model_fields}
)


def _located(path: Path, data: Any, lines: dict[Any, int], exc: ValidationError) -> InputError:
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    error = errors[0]
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(loc[-1]), _KEYS, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return _at(path, data, lines, loc, f"unknown key{hint}")
    if error["type"] == "missing":
        return _at(path, data, lines, loc[:-1], f"missing key '{loc[-1]}'")
    return _at(path, data, lines, loc, str(error["msg"]).removeprefix("Value error, "))


def _at(path: Path, data: Any, lines: dict[Any, int], loc: tuple[Any, ...], msg: str) -> InputError:
    line, field = _text.locate(data, lines, loc)
    return InputError(path, msg, line=line, field=field or None)


def _check(suite: Suite, path: Path, data: Any, lines: dict[Any, int]) -> None:
    """What the schema cannot say: names, tasks, formats, each task in one competence."""
    from ..sources.datasets import known_formats

    for name, entry in suite.entries.items():
        if not NAME.match(name):
            raise _at(
                path,
                data,
                lines,
                ("entries", name),
                f"entry name '{name}' is not lower-case letters, digits, '.', '_' and '-'",
            )
        if entry.dataset is not None and entry.dataset.format not in known_formats():
            raise _at(
                path,
                data,
                lines,
                ("entries", name, "dataset", "format"),
                f"unknown format '{entry.dataset.format}' (known: {', '.join(known_formats())})",
            )
    seen: dict[str, str] = {}
    for competence, measured in suite.competences.items():
        if not measured.tasks:
            raise _at(path, data, lines, ("competences", competence), "names no task")
        for index, task in enumerate(measured.tasks):
            where = ("competences", competence, "tasks", index)
            problem = _task_problem(task, seen.get(task), measured)
            if problem:
                raise _at(path, data, lines, where, problem)
            seen[task] = competence
        problem = _methods_problem(measured)
        if problem:
            raise _at(path, data, lines, ("competences", competence, "methods"), problem)


def _methods_problem(measured: Competence) -> str | None:
    methods = measured.methods
    if len(set(methods)) < len(methods):
        return f"names a method twice ({', '.join(methods)})"
    if methods != ["loglik"] and not measured.pair_tasks():
        return (
            "methods choose how minimal pairs are asked, and none of this competence's tasks "
            "is a minimal-pair task"
        )
    return None


def _task_problem(task: str, other: str | None, measured: Competence) -> str | None:
    spec = get_task(task)
    if spec is None:
        return f"unknown task '{task}'"
    if spec.choice_of is not None:
        return (
            f"task '{task}' is the forced-choice form of {spec.choice_of}: name "
            f"{spec.choice_of} and let the competence accept it (methods: [loglik, choice])"
        )
    if spec.mode == "loglikelihood" and "choice" in measured.methods:
        if get_task(task + CHOICE_SUFFIX) is None:
            return f"task '{task}' has no forced-choice form, so methods cannot name choice"
    if other is not None:
        return f"task '{task}' is already in the competence '{other}' (an item counts once)"
    if spec.headline in UNBOUNDED:
        return (
            f"task '{task}' is scored by {spec.headline}, an error rather than a share of "
            "[0, 1]: no chance correction pools it with other tasks"
        )
    return None
