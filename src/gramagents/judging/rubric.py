"""Rubrics for judges: markdown files with YAML front matter, and the judgment model of each.

A rubric file looks like this (see `rubrics/README.md`)::

    ---
    id: text-writing
    version: 1
    task: text_writing
    scale: [0, 100]
    dimensions:
      - name: Language Accuracy
        points: 20
        criteria:
          - Grammar correctness (10)
          - Vocabulary precision (10)
      ...
    ---
    The same table for humans, and a short instruction for the judge.

The dimensions' points add up to the scale's maximum. The judge scores every dimension and
their sum is the total; `judgment_model` builds the pydantic model that enforces this, so that
a judge giving an inconsistent total is asked again. The rubric's hash (of the file's bytes) is
part of every judgment's cache key.
"""

from __future__ import annotations

import json
import keyword
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeGuard

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from .. import resources
from ..errors import GramagentsError, InputError
from ..sources._text import load_yaml_with_lines, read_utf8
from ..templates import PromptTemplate, load_prompt

REQUIRED_FIELDS = ("id", "version", "scale", "task", "dimensions")
JUDGE_PROMPT = "judge.md"
"""Prompt template of the rubric judge, under `prompts/` (the engine's, beside `raw.md`)."""
REASON_CHARS = 300
"""The longest reason a judgment may give (one or two sentences)."""
RESERVED_NAMES = ("total", "reason")
"""Keys of the judge's reply besides the dimensions; no dimension may be named so."""

_CLOSING = re.compile(r"^---[ \t]*$", re.MULTILINE)
_CRITERION_POINTS = re.compile(r"\((\d+(?:\.\d+)?)\)\s*$")


@dataclass(frozen=True)
class Dimension:
    """One scoring dimension of a rubric."""

    name: str
    points: float
    """The most the dimension can earn."""
    criteria: tuple[str, ...] = ()
    """Sub-criteria in the rubric's wording (each may end with its points, e.g. `(10)`)."""
    key: str = ""
    """Field name of the dimension in the judgment model (a Python identifier)."""
    line: int = 0
    """Line of the dimension in the rubric file."""


@dataclass(frozen=True)
class Rubric:
    """A loaded rubric."""

    id: str
    version: str
    scale: tuple[float, float]
    """Lowest and highest total."""
    task: str
    """The task family the rubric judges, e.g. `text_writing`."""
    dimensions: tuple[Dimension, ...]
    body: str
    """The markdown after the front matter: the table for humans and the judge's instruction."""
    path: Path
    hash: str
    """sha256 (hex) of the file's bytes."""
    source: str | None = None
    """Where the criteria come from (e.g. the paper's table), when the file says."""

    @property
    def max_points(self) -> float:
        """The scale's maximum, which the dimensions' points add up to."""
        return self.scale[1]


# --- loading ----------------------------------------------------------------------------------


def load_rubric(path: str | Path) -> Rubric:
    """Read and check a rubric file.

    Args:
        path: The markdown file.

    Returns:
        The rubric, with the sha256 of the file's bytes.

    Raises:
        InputError: The file is missing or malformed; the message names the line and field.
    """
    path = Path(path)
    text = read_utf8(path).replace("\r\n", "\n")
    front, body = _split(path, text)
    data, lines = load_yaml_with_lines(path, front)
    if data is None:
        raise InputError(path, "the front matter is empty", line=1)
    if not isinstance(data, dict):
        raise InputError(path, "the front matter must be a mapping of fields", line=2)

    def line_of(field: str) -> int:
        return lines.get((id(data), field), 1)

    _check_fields(path, data, line_of)
    scale = _scale(path, data["scale"], line_of("scale"))
    dimensions = _dimensions(path, data["dimensions"], line_of("dimensions"), lines)
    total = sum(d.points for d in dimensions)
    if not math.isclose(total, scale[1], abs_tol=1e-9):
        raise InputError(
            path,
            f"the dimensions' points sum to {_num(total)} but the scale max is {_num(scale[1])}",
            line=line_of("dimensions"),
            field="dimensions",
        )
    source = data.get("source")
    return Rubric(
        id=data["id"].strip(),
        version=str(data["version"]),
        scale=scale,
        task=data["task"].strip(),
        dimensions=dimensions,
        body=body.strip("\n"),
        path=path,
        hash=resources.file_hash(path),
        source=str(source) if source is not None else None,
    )


def _check_fields(path: Path, data: dict[str, Any], line_of: Callable[[str], int]) -> None:
    """The front matter's required fields are there, with `id`, `task` and `version` usable."""
    for field in REQUIRED_FIELDS:
        if field not in data or data[field] is None:
            raise InputError(
                path,
                f"missing (a rubric's front matter needs {', '.join(REQUIRED_FIELDS)})",
                line=line_of(field),
                field=field,
            )
    for field in ("id", "task"):
        if not isinstance(data[field], str) or not data[field].strip():
            raise InputError(path, "must be a non-empty string", line=line_of(field), field=field)
    version = data["version"]
    if isinstance(version, bool) or not isinstance(version, str | int | float):
        raise InputError(
            path, "must be a string or number", line=line_of("version"), field="version"
        )


def _split(path: Path, text: str) -> tuple[str, str]:
    """Return (front matter starting with its `---` line, body)."""
    if not text.startswith("---\n"):
        raise InputError(
            path,
            "no YAML front matter: a rubric starts with a line '---', then its fields "
            f"({', '.join(REQUIRED_FIELDS)}), then a line '---'",
            line=1,
        )
    closing = _CLOSING.search(text, 4)
    if closing is None:
        raise InputError(path, "the front matter opened with '---' is never closed", line=1)
    body = text[closing.end() :]
    return text[: closing.start()], body[1:] if body.startswith("\n") else body


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _scale(path: Path, value: Any, line: int) -> tuple[float, float]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(_is_number(v) for v in value)
        or not value[0] < value[1]
    ):
        raise InputError(
            path, f"must be [min, max] with min < max, got {value!r}", line=line, field="scale"
        )
    return float(value[0]), float(value[1])


def _dimensions(path: Path, value: Any, line: int, lines: dict[Any, int]) -> tuple[Dimension, ...]:
    if not isinstance(value, list):
        raise InputError(path, "must be a list of dimensions", line=line, field="dimensions")
    if not value:
        raise InputError(path, "the dimension list is empty", line=line, field="dimensions")
    seen: dict[str, int] = {}
    keys: set[str] = set()
    dimensions = []
    for index, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise InputError(
                path,
                f"dimension {index} must be a mapping with name, points and criteria",
                line=line,
                field="dimensions",
            )
        here = lines.get(id(item), line)

        def line_of(field: str, item: dict[str, Any] = item, here: int = here) -> int:
            return lines.get((id(item), field), here)

        def bad_name(message: str, line: int = line_of("name")) -> InputError:
            return InputError(path, message, line=line, field="name")

        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise bad_name(f"dimension {index} needs a non-empty name")
        name = name.strip()
        if name in RESERVED_NAMES:
            raise bad_name(f"'{name}' is reserved for the judge's reply; rename the dimension")
        folded = name.casefold()
        if folded in seen:
            raise bad_name(f"duplicate dimension name '{name}' (first at line {seen[folded]})")
        seen[folded] = line_of("name")
        points = item.get("points")
        if not _is_number(points) or points <= 0:
            got = "nothing" if points is None else repr(points)
            raise InputError(
                path,
                f"dimension '{name}' needs a positive number of points, got {got}",
                line=line_of("points"),
                field="points",
            )
        criteria = _criteria(path, name, item.get("criteria", []), line_of("criteria"))
        _check_criterion_points(path, name, float(points), criteria, line_of("criteria"))
        key = _identifier(name, index, keys)
        keys.add(key)
        dimensions.append(Dimension(name, float(points), criteria, key, here))
    return tuple(dimensions)


def _criteria(path: Path, name: str, value: Any, line: int) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(c, str) and c.strip() for c in value):
        raise InputError(
            path,
            f"dimension '{name}': criteria must be a list of non-empty strings",
            line=line,
            field="criteria",
        )
    return tuple(c.strip() for c in value)


def _check_criterion_points(
    path: Path, name: str, points: float, criteria: tuple[str, ...], line: int
) -> None:
    """When every criterion ends with its points, e.g. `(10)`, they must add up."""
    found = [_CRITERION_POINTS.search(c) for c in criteria]
    if not criteria or not all(found):
        return
    total = sum(float(m.group(1)) for m in found if m)
    if not math.isclose(total, points, abs_tol=1e-9):
        raise InputError(
            path,
            f"dimension '{name}': its criteria's points sum to {_num(total)}, "
            f"not to the dimension's {_num(points)}",
            line=line,
            field="criteria",
        )


def _identifier(name: str, index: int, taken: set[str]) -> str:
    """A field name for a dimension: its name in snake case, or `dim_<n>` when that fails."""
    slug = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_").lower()
    unusable = (
        not slug
        or slug[0].isdigit()
        or keyword.iskeyword(slug)
        or slug in RESERVED_NAMES
        or slug.startswith("model_")
        or hasattr(Judgment, slug)
        or slug in taken
    )
    if not unusable:
        return slug
    key, n = f"dim_{index}", index
    while key in taken:
        n += 1000
        key = f"dim_{n}"
    return key


def _num(value: float) -> str:
    """A number as written in a rubric: `20`, not `20.0`."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def available_rubrics() -> list[str]:
    """Ids (file stems) of the rubrics found in the working directory and the packaged copies."""
    names: set[str] = set()
    for root in resources.search_roots("rubrics"):
        if root.is_dir():
            names.update(p.stem for p in root.glob("*.md") if p.name.lower() != "readme.md")
    return sorted(names)


def find_rubric(name_or_path: str | Path, user_named: bool = False) -> Rubric:
    """Load a rubric given as a bare id such as `text-writing`, or as a path.

    A bare id is looked up as `rubrics/<id>.md`, in the working directory first and in the
    packaged rubrics second; a path (`rubrics/mine.md`) only inside those folders, since the
    names come from tasks and items. `user_named`: the user typed the path on the command line,
    so a file anywhere is read as given.

    Raises:
        GramagentsError: No such rubric (the message lists those available), or one named
            outside the rubric folders (`resources.ResourceRefused`).
        InputError: The rubric file is malformed.
    """
    direct = Path(name_or_path)
    if user_named and direct.is_file():
        return load_rubric(direct)
    name = str(name_or_path)
    path_like = name.endswith(".md") or "/" in name or "\\" in name
    try:
        return load_rubric(resources.find("rubrics", name if path_like else f"{name}.md"))
    except (InputError, resources.ResourceRefused):
        raise
    except GramagentsError:
        if path_like:
            raise InputError(name, "file not found") from None
        known = ", ".join(available_rubrics()) or "none"
        raise GramagentsError(f"rubric '{name}' not found (available: {known})") from None


# --- the judge --------------------------------------------------------------------------------


class Judgment(BaseModel):
    """Base of the judgment models `judgment_model` builds; checks that the total adds up."""

    model_config = ConfigDict(populate_by_name=True, protected_namespaces=())

    rubric_id: ClassVar[str] = ""
    rubric_hash: ClassVar[str] = ""
    dimension_names: ClassVar[dict[str, str]] = {}
    """Field name to dimension name."""
    scale: ClassVar[tuple[float, float]] = (0.0, 100.0)

    @model_validator(mode="after")
    def _total_adds_up(self) -> Judgment:
        total = self.total_score()
        lo, hi = self.scale
        if not lo - 1e-9 <= total <= hi + 1e-9:
            raise ValueError(f"total {_num(total)} is outside the scale {_num(lo)}-{_num(hi)}")
        summed = sum(getattr(self, key) for key in self.dimension_names)
        if not math.isclose(total, summed, abs_tol=1e-6):
            raise ValueError(
                f"total is {_num(total)} but the dimension scores sum to {_num(summed)}; "
                "the total must be the sum of the dimension scores"
            )
        return self

    def total_score(self) -> float:
        """The judge's total (the field `total`, declared by the subclass)."""
        return float(getattr(self, "total"))  # noqa: B009 - not declared on the base

    def dimension_scores(self) -> dict[str, float]:
        """Scores by dimension name, in the rubric's order."""
        return {name: getattr(self, key) for key, name in self.dimension_names.items()}


_MODELS: dict[tuple[str, str], type[Judgment]] = {}


def judgment_model(rubric: Rubric) -> type[Judgment]:
    """The pydantic model of a judge's reply for `rubric`.

    One float field per dimension, bounded by 0 and the dimension's points; the field name is
    `Dimension.key` (an identifier) and its alias is the dimension's name, which is also the
    key the judge writes in its JSON (either is accepted). Then `total` (the sum of the
    dimension scores, inside the scale) and `reason`. A reply whose total is not the sum fails
    validation, so instructor asks again.
    """
    cache_key = (rubric.hash, str(rubric.path))
    if cache_key in _MODELS:
        return _MODELS[cache_key]
    lo, hi = rubric.scale
    fields: dict[str, Any] = {}
    for dim in rubric.dimensions:
        about = f"0 to {_num(dim.points)} points"
        if dim.criteria:
            about += ": " + "; ".join(dim.criteria)
        fields[dim.key] = (
            float,
            Field(ge=0, le=dim.points, alias=dim.name, title=dim.name, description=about),
        )
    fields["total"] = (
        float,
        Field(description=f"Sum of the dimension scores ({_num(lo)} to {_num(hi)})."),
    )
    # Bounded: a local judge writes at most REASON_CHARS // 3 + 1 tokens (models/guided.py).
    fields["reason"] = (
        str,
        Field(max_length=REASON_CHARS, description="One or two sentences saying why."),
    )
    slug = re.sub(r"[^0-9A-Za-z]+", "_", rubric.id).strip("_") or "rubric"
    model: type[Judgment] = create_model(f"Judgment_{slug}", __base__=Judgment, **fields)
    model.rubric_id = rubric.id
    model.rubric_hash = rubric.hash
    model.dimension_names = {d.key: d.name for d in rubric.dimensions}
    model.scale = rubric.scale
    _MODELS[cache_key] = model
    return model


def judge_messages(
    rubric: Rubric, task_input: str, answer: str, template: PromptTemplate | None = None
) -> list[dict[str, str]]:
    """The judge's chat messages (system, then user) for one answer.

    Rendered from the template `JUDGE_PROMPT` (`template`, when the caller loaded it already);
    the user message holds the rubric's body, the task input and the answer, each fenced with
    `fence_for` of both (judging/fence.py), and asks for JSON with one score per dimension, the
    total and a reason.

    Returns:
        Messages as `{"role": ..., "content": ...}` dicts.
    """
    from .fence import fence_for

    template = template or load_prompt(JUDGE_PROMPT)
    lo, hi = rubric.scale
    task_input, answer = task_input.strip(), answer.strip()
    variables = {
        "rubric_id": rubric.id,
        "rubric": rubric.body,
        "scale_min": _num(lo),
        "scale_max": _num(hi),
        "dimensions": [
            {
                "name": d.name,
                "key": json.dumps(d.name, ensure_ascii=False),
                "points": _num(d.points),
            }
            for d in rubric.dimensions
        ],
        "task_input": task_input,
        "answer": answer,
        "fence": fence_for(task_input, answer),
    }
    return [{"role": m.role, "content": m.content} for m in template.render(variables)]
