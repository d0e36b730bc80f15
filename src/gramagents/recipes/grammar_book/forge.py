"""Twin Forge (paper §3.2): back-check the generated sentences, then write their twins.

- `sentence-backcheck` asks whether a generated sentence is grammatical, whether it
  instantiates the point it was written for, and how good its English translation is on a
  0-10 scale (the paper's LLM-as-a-judge score). It passes only when the sentence is
  grammatical, instantiates the point and the translation scores at least `min_quality`;
  anything else is rejected and kept, with its verdict, out of the banks.
- `minimal-pair-maker` writes, for each sentence that passed, an ungrammatical counterpart
  that differs from it only in the targeted structure. The answer is validated: it must differ
  from the sentence in exactly one place (one contiguous run of words, at most
  `max_changed_words` on either side), or it is sent back; what still fails is a failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ... import api
from .records import book_language

BACKCHECK = "sentence-backcheck"
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class BackcheckOptions(BaseModel):
    """When a generated sentence passes."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    min_quality: int = Field(default=6, ge=0, le=10)
    """Lowest translation quality (0-10) a passing pair may have."""


class SentenceVerdict(BaseModel):
    """The back-checker's answer."""

    grammatical: bool = Field(description="The sentence is grammatical in the language.")
    instantiates_point: bool = Field(description="The sentence uses the grammar point.")
    translation_quality: int = Field(ge=0, le=10, description="The English translation, 0-10.")
    reason: api.Reason = Field(description="One sentence saying why.")


@dataclass(frozen=True, slots=True)
class SentenceTask(api.InstanceTask):
    """One accepted sentence of a book in `language`, with its point."""

    language: str


def _sentence_tasks(
    view: api.BuildView, keep: Callable[[api.Instance], bool]
) -> list[SentenceTask]:
    """One task per accepted sentence of a known point that `keep` takes."""
    points = {p.id: p for p in view.of_type(api.GrammarPoint)}
    language = book_language(view.context)
    return [
        SentenceTask(i, points[i.point_id], language)
        for i in view.of_type(api.Instance)
        if i.kind == "example" and i.status == "accepted" and i.point_id in points and keep(i)
    ]


def _checkable(view: api.BuildView, options: BaseModel) -> list[SentenceTask]:
    return _sentence_tasks(view, lambda i: i.origin == "agent")


async def backcheck(task: SentenceTask, ctx: api.AgentContext) -> api.AgentResult:
    """Judge one sentence pair."""
    instance = task.instance
    options: Any = ctx.options
    return await api.judge_instance(
        task,
        ctx,
        BACKCHECK,
        SentenceVerdict,
        lambda v: (
            v.grammatical and v.instantiates_point and v.translation_quality >= options.min_quality
        ),
        extra={
            "language": task.language,
            "english": instance.annotations.get("english", ""),
        },
    )


api.agent(
    api.AgentSpec(
        name=BACKCHECK,
        run=backcheck,
        plan=_checkable,
        options=BackcheckOptions,
        outcomes=("accepted", "rejected", "failed"),
        description="Grammaticality, point instantiation and translation quality (§3.2).",
    )
)


class TwinOptions(BaseModel):
    """How far a twin may differ from its sentence."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_changed_words: int = Field(default=3, ge=1)
    """Words (or punctuation marks) the one changed place may span on either side."""


def tokens(text: str) -> list[str]:
    """Words and punctuation marks of a sentence."""
    return _TOKEN.findall(text)


def difference(sentence: str, twin: str) -> tuple[list[str], list[str]] | None:
    """Where `twin` differs from `sentence` (None when they are the same words).

    What is left of each once the words both begin and end with are set aside.
    """
    a, b = tokens(sentence), tokens(twin)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    if start == len(a) == len(b):
        return None
    return a[start : len(a) - end], b[start : len(b) - end]


class Twin(BaseModel):
    """The minimal-pair maker's answer."""

    ungrammatical: str = Field(
        description="The sentence made ungrammatical by changing only the targeted structure."
    )
    change: str = Field(description="What was changed, in a few words.")

    @field_validator("ungrammatical")
    @classmethod
    def _one_local_difference(cls, value: str, info: ValidationInfo) -> str:
        text = " ".join(value.split())
        context = info.context or {}
        sentence = context.get("sentence")
        if sentence is None:
            return text
        place = difference(sentence, text)
        if place is None or api.normalise(text) == api.normalise(sentence):
            raise ValueError("the sentence is unchanged; change the targeted structure")
        most = context.get("max_changed_words", 3)
        spread = max(len(place[0]), len(place[1]))
        if spread > most:
            raise ValueError(
                f"the sentences differ over {spread} words; change one place of at most "
                f"{most} words and keep every other word"
            )
        return text


def _twinnable(view: api.BuildView, options: BaseModel) -> list[SentenceTask]:
    return _sentence_tasks(
        view, lambda i: any(c.check == BACKCHECK and c.passed for c in i.provenance.checks)
    )


def twin_record(instance: api.Instance, twin: Twin, provenance: api.Provenance) -> api.Instance:
    """The pair of `instance` (the correction) and its ungrammatical twin, with their difference."""
    place = difference(instance.text, twin.ungrammatical)
    old, new = place if place is not None else ([], [])
    return api.Instance(
        id=f"{instance.id}/twin",
        point_id=instance.point_id,
        text=twin.ungrammatical,
        kind="pair",
        origin="agent",
        annotations={
            "correction": instance.text,
            "alternatives": [],
            "sentence_id": instance.id,
            "english": instance.annotations.get("english", ""),
            "change": twin.change,
            "difference": {"sentence": " ".join(old), "twin": " ".join(new)},
        },
        provenance=provenance,
    )


async def make_twin(task: SentenceTask, ctx: api.AgentContext) -> api.AgentResult:
    """The ungrammatical twin of one accepted sentence."""
    instance, point = task.instance, task.point
    options: Any = ctx.options
    template = ctx.template("en")
    variables = {
        "language": task.language,
        "name": point.name,
        "description": point.description,
        "sentence": instance.text,
        "english": instance.annotations.get("english", ""),
    }
    result = await ctx.ask(
        template,
        variables,
        Twin,
        context={"sentence": instance.text, "max_changed_words": options.max_changed_words},
    )
    if result.value is None:
        return api.AgentResult([], "failed", failure=result.error)
    return api.AgentResult(
        [twin_record(instance, result.value, ctx.made_by("minimal-pair-maker", template))], "made"
    )


api.agent(
    api.AgentSpec(
        name="minimal-pair-maker",
        run=make_twin,
        plan=_twinnable,
        options=TwinOptions,
        outcomes=("made", "failed"),
        description="An ungrammatical twin differing only in the targeted structure (§3.2).",
    )
)
