"""The grammar-point extractor and the merge of duplicates (Phrasing Atelier, paper §3.2).

The extractor reads one window (a run of sentences, or a table row with the text around its
table) and returns the grammar points it explains: a short name, a category, a description,
the book's examples of it and the pages it is on. The answer's schema is made for the window
(`points_model`): categories are the recipe's, pages are the window's own, so a page outside
the window cannot be named. Examples the window does not contain are left out (an example is
the book's, never the model's). The merge step unites points found by several windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    AgentTask,
    BuildView,
    FilterSpec,
    NodeEnv,
    NodeUpdate,
    agent,
    filter_node,
    near_duplicates,
    normalise,
)
from .records import BookPoint, BookWindow, book_language


class ExtractOptions(BaseModel):
    """What the extractor may return."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    categories: list[str] = Field(default_factory=lambda: ["morphology", "syntax"], min_length=1)
    """The categories a point is filed under."""
    max_points: int = Field(default=3, ge=1)
    """Points one window may yield."""


def _words(value: str, what: str, least: int) -> str:
    text = " ".join(value.split())
    if len(text.split()) < least:
        raise ValueError(f"the {what} needs at least {least} words")
    return text


class _PointBase(BaseModel):
    name: str = Field(description="A short name of the grammar point (a few words).")
    description: str = Field(description="The rule, in one to three sentences of English.")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _words(value, "name", 1)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        return _words(value, "description", 4)


@lru_cache(maxsize=256)
def points_model(categories: tuple[str, ...], pages: tuple[int, ...], most: int) -> type[Any]:
    """The extractor's answer for a window on `pages`, filed under `categories`."""
    point = create_model(
        "GrammarPointDraft",
        __base__=_PointBase,
        category=(Literal[categories], Field(description="The point's category.")),  # type: ignore[valid-type]
        examples=(
            list[str],
            Field(default_factory=list, description="Examples of the point quoted from the text."),
        ),
        source_pages=(
            list[Literal[pages]],  # type: ignore[valid-type]
            Field(min_length=1, description="The pages the point is explained on."),
        ),
    )
    return create_model(
        "GrammarPoints",
        points=(
            list[point],  # type: ignore[valid-type]
            Field(max_length=most, description="The grammar points the passage explains."),
        ),
    )


@dataclass(frozen=True, slots=True)
class WindowTask(AgentTask):
    """One window of a book in `language` (`code`: the language's code)."""

    window: BookWindow
    language: str
    code: str


def plan_windows(view: BuildView, options: BaseModel) -> list[WindowTask]:
    """One call per window."""
    language, code = book_language(view.context), view.context.get("book", {}).get("code", "")
    return [WindowTask(w, language, code) for w in view.of_type(BookWindow)]


def grounded(example: str, window: BookWindow) -> bool:
    """Whether the window holds the example (compared without case, spaces or punctuation)."""
    wanted = normalise(example)
    return bool(wanted) and wanted in normalise(f"{window.text} {' '.join(window.row)}")


async def extract_points(task: WindowTask, ctx: AgentContext) -> AgentResult:
    """Grammar points of one window."""
    window = task.window
    options: Any = ctx.options
    schema = points_model(tuple(options.categories), tuple(window.pages), options.max_points)
    template = ctx.template("en")
    variables = {
        "language": task.language,
        "section": window.section,
        "kind": window.kind,
        "text": window.text,
        "row": window.row_text,
        "pages": window.pages,
        "categories": options.categories,
        "max_points": options.max_points,
    }
    result = await ctx.ask(template, variables, schema)
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    points = []
    seen: set[str] = set()
    for draft in result.value.points:
        key = normalise(draft.name)
        if key in seen:
            continue
        seen.add(key)
        points.append(
            BookPoint(
                id=f"{window.id}/p{len(points) + 1}",
                category=draft.category,
                level="",
                name=draft.name,
                description=draft.description,
                language=task.code,
                examples=[e.strip() for e in draft.examples if grounded(e, window)],
                pages=sorted(set(draft.source_pages)),
                windows=[window.id],
                origins=[window.kind],
                section=window.section,
                model=ctx.model.label,
                prompt_hash=template.hash,
            )
        )
    return AgentResult(points, "points" if points else "none")


agent(
    AgentSpec(
        name="grammar-point-extractor",
        run=extract_points,
        plan=plan_windows,
        options=ExtractOptions,
        outcomes=("points", "none", "failed"),
        description="Grammar points of a window of text or a table row (paper §3.2).",
    )
)


class MergeOptions(BaseModel):
    """When two extracted points are the same point."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    threshold: float = Field(default=0.7, gt=0, le=1)
    """Estimated Jaccard similarity of the descriptions (character 3-grams) above which two
    points of one category are duplicates; points with the same name are always."""


def _merge(first: BookPoint, other: BookPoint) -> BookPoint:
    examples = list(dict.fromkeys([*first.examples, *other.examples]))
    origins = list(dict.fromkeys([*first.origins, *other.origins]))
    return first.model_copy(
        update={
            "examples": examples,
            "pages": sorted({*first.pages, *other.pages}),
            "windows": [*first.windows, *other.windows],
            "origins": origins,
            "merged": [*first.merged, other.id],
        }
    )


async def merge_points(view: BuildView, options: Any, env: NodeEnv) -> NodeUpdate:
    """Unite duplicates: same category and the same name, or near-identical descriptions."""
    points = view.of_type(BookPoint)
    kept: dict[str, BookPoint] = {}
    by_name: dict[tuple[str, str], str] = {}
    into: dict[str, str] = {}
    for point in points:
        first = by_name.get((point.category, normalise(point.name)))
        if first is None:
            by_name[(point.category, normalise(point.name))] = point.id
            kept[point.id] = point
        else:
            into[point.id] = first
    order = list(kept.values())
    repeats = near_duplicates(
        [p.description for p in order], [p.category for p in order], options.threshold
    )
    for index, (first_index, _) in repeats.items():
        into[order[index].id] = order[first_index].id
        kept.pop(order[index].id)
    failures = []
    for point in points:
        if point.id in into:
            target = into[point.id]
            while target in into:
                target = into[target]
            kept[target] = _merge(kept[target], point)
            failures.append({"id": point.id, "merged_into": target, "reason": "duplicate point"})
    return NodeUpdate(
        records=list(kept.values()),
        removed=list(into),
        failures=failures,
        counts={"before": len(points), "kept": len(kept), "merged": len(into)},
    )


filter_node(
    FilterSpec(
        name="book-point-merge",
        run=merge_points,
        options=MergeOptions,
        description="Merge grammar points found by several windows (paper §3.2).",
    )
)
