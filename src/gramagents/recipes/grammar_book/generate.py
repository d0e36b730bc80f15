"""The controlled sentence-pair generator (Phrasing Atelier, paper §3.2).

For each grammar point, `per_point` calls (the paper's dataset has three to four pairs per
point), each writing one sentence in the book's language that must instantiate the point and
its English translation, of a controlled length (`min_words` to `max_words` words in the
target sentence). Line breaks and runs of spaces are joined into single spaces; a pair out
of bounds, empty, repeating itself, or a sentence equal to its translation is sent back to
the model; what still fails is a failure with its reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    AgentTask,
    BuildView,
    Instance,
    agent,
    normalise,
)
from .records import BookPoint, book_language

_REPEATS = re.compile(r"(.{3,}?)\1{2,}")


class PairOptions(BaseModel):
    """How many sentence pairs per point, and how long."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    per_point: int = Field(default=3, ge=1)
    """Pairs asked for each grammar point (one call each)."""
    min_words: int = Field(default=5, ge=1)
    """Fewest words in the target-language sentence."""
    max_words: int = Field(default=30, ge=1)
    """Most words in the target-language sentence."""


def word_count(text: str) -> int:
    """Words of a sentence (characters for scripts written without spaces)."""
    words = text.split()
    if len(words) == 1 and len(text) > 12 and not text.isascii():
        return len(normalise(text))
    return len(words)


class SentencePair(BaseModel):
    """The generator's answer."""

    sentence: str = Field(description="One sentence in the target language that uses the point.")
    english: str = Field(description="Its English translation.")

    @model_validator(mode="after")
    def _controlled(self, info: ValidationInfo) -> SentencePair:
        bounds = (info.context or {}).get("length", (1, 1000))
        for name in ("sentence", "english"):
            text = " ".join(str(getattr(self, name)).split())
            if not text:
                raise ValueError(f"the {name} is empty")
            if _REPEATS.search(text):
                raise ValueError(f"the {name} repeats itself")
            setattr(self, name, text)
        if normalise(self.sentence) == normalise(self.english):
            raise ValueError("the sentence must be in the target language, not English")
        words = word_count(self.sentence)
        if not bounds[0] <= words <= bounds[1]:
            raise ValueError(
                f"the sentence has {words} words; write {bounds[0]} to {bounds[1]} words"
            )
        return self


@dataclass(frozen=True, slots=True)
class PairTask(AgentTask):
    """The `index`-th sentence pair to make for a book's point, in `language`."""

    point: BookPoint
    index: int
    language: str


def plan_points(view: BuildView, options: BaseModel) -> list[PairTask]:
    """`per_point` calls per grammar point."""
    assert isinstance(options, PairOptions)
    language = book_language(view.context)
    return [
        PairTask(point, index, language)
        for point in view.of_type(BookPoint)
        for index in range(options.per_point)
    ]


async def generate_pair(task: PairTask, ctx: AgentContext) -> AgentResult:
    """One sentence pair for one point."""
    point, index = task.point, task.index
    options: Any = ctx.options
    template = ctx.template("en")
    variables = {
        "language": task.language,
        "name": point.name,
        "category": point.category,
        "description": point.description,
        "examples": point.examples,
        "index": index + 1,
        "min_words": options.min_words,
        "max_words": options.max_words,
    }
    result = await ctx.ask(
        template,
        variables,
        SentencePair,
        sample=index,
        context={"length": (options.min_words, options.max_words)},
    )
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    pair = result.value
    instance = Instance(
        id=f"{point.id}/s{index + 1}",
        point_id=point.id,
        text=pair.sentence,
        kind="example",
        origin="agent",
        annotations={"english": pair.english},
        provenance=ctx.made_by("sentence-pair-generator", template),
    )
    return AgentResult([instance], "generated")


agent(
    AgentSpec(
        name="sentence-pair-generator",
        run=generate_pair,
        plan=plan_points,
        options=PairOptions,
        outcomes=("generated", "failed"),
        description="Sentence pairs of controlled length that instantiate a point (§3.2).",
    )
)
