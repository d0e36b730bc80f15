"""EduEval's agents (Appendix B and §3.1): standardizer, distractor writer, level router.

- `item-standardizer`: what the rules could not parse becomes a multiple-choice item, or a
  failure with the reason (with `--agents off`: every such line is a failure).
- `distractor-writer`: objective items with too few options get plausible wrong ones, each
  back-checked to be wrong; an item still short is flagged (with `--agents off` the short
  items are counted only).
- `level-router`: each item's dominant level (secondary levels, DOK depth, reason) from the
  taxonomy's guide; after every item is routed, a classifier on sentence embeddings trained
  on the layout's levels cross-checks it (with agents on or off), and disagreements are
  flagged for review.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...api import (
    AgentContext,
    AgentResult,
    AgentSpec,
    AgentTask,
    BuildView,
    ChatRequest,
    GenParams,
    NodeEnv,
    NodeUpdate,
    agent,
    cross_validated_labels,
    load_prompt,
)
from .sources import EduItem, Unparsed, from_agent

OBJECTIVE = {"mc"}
"""Shapes whose items become multiple choice with a full set of options."""


class Standardized(BaseModel):
    """What the standardization agent makes of an item the rules could not parse."""

    question: str = Field(description="The question stem, without the options.")
    options: dict[str, str] = Field(description="Options by letter, e.g. {'A': '...'}.")
    answer: str = Field(
        description="The letter of the correct option; all of them (e.g. 'BD') when several are."
    )
    explanation: str = ""


class Distractors(BaseModel):
    """Wrong options proposed for a multiple-choice item."""

    options: list[str] = Field(description="Plausible but wrong options, one per string.")
    reason: str = ""


class DistractorCheck(BaseModel):
    """Back-check of one proposed distractor."""

    correct: bool = Field(description="True if this option is ALSO a correct answer.")
    reason: str = ""


class Route(BaseModel):
    """The router's verdict on an item."""

    level: str = Field(description="Dominant level: one of the taxonomy's level ids.")
    secondary: list[str] = Field(default_factory=list)
    dok: int = Field(default=1, ge=1, le=4)
    reason: str = ""


async def _ask(
    ctx: AgentContext, variables: dict[str, Any], schema: type[BaseModel], prompt: str = ""
) -> Any:
    template = load_prompt(prompt or ctx.prompt)
    params = ctx.params if not prompt else GenParams(max_tokens=96)
    return await ctx.model.structured(
        ChatRequest(messages=template.render(variables), params=params, prompt_hash=template.hash),
        schema,
        max_reasks=ctx.max_reasks,
    )


# --- standardizer ------------------------------------------------------------------------------


def _describe(entry: Unparsed) -> dict[str, Any]:
    return {
        "source": f"{entry.path}:{entry.line}",
        "reason_rules": entry.reason,
        "text": entry.text[:500],
    }


@dataclass(frozen=True, slots=True)
class UnparsedTask(AgentTask):
    """One exam line the rules could not parse, for the standardizer."""

    record: Unparsed


@dataclass(frozen=True, slots=True)
class ItemTask(AgentTask):
    """One standardized exam item."""

    record: EduItem


def _plan_unparsed(view: BuildView, options: BaseModel) -> list[UnparsedTask]:
    return [UnparsedTask(entry) for entry in view.of_type(Unparsed)]


async def standardize(task: UnparsedTask, ctx: AgentContext) -> AgentResult:
    """One unparsed line to an item, or a failure with the reason."""
    entry = task.record
    outcome = await _ask(ctx, {"raw": entry.text, "reason": entry.reason}, Standardized)
    value = outcome.value
    letters = _letters(value) if value is not None else None
    if value is not None and letters:
        made = from_agent(entry, value.model_dump(), letters)
        return AgentResult([made], "fixed", removed=[entry.id])
    reason = outcome.error or f"answer '{value.answer}' is not one of the options"
    return AgentResult([], "failed", failure=reason, removed=[entry.id], details=_describe(entry))


def _letters(value: Standardized) -> list[str] | None:
    """The answer's option letters (one, or several for a multiple-answer item), if it names any."""
    from .options import OptionError, answer_letters

    options = {str(k).strip().upper(): str(v) for k, v in value.options.items()}
    try:
        return answer_letters(value.answer, options)
    except OptionError:
        return None


def unparsed_fail(view: BuildView, options: BaseModel) -> NodeUpdate:
    """With agents off, every line the rules could not parse is a failure of the reading."""
    unparsed = view.of_type(Unparsed)
    return NodeUpdate(
        removed=[u.id for u in unparsed],
        counts={"asked": 0, "fixed": 0, "failed": len(unparsed)},
        failures=[{"stage": "ingest", **_describe(u)} for u in unparsed],
    )


agent(
    AgentSpec(
        name="item-standardizer",
        run=standardize,
        plan=_plan_unparsed,
        planned="asked",
        outcomes=("fixed", "failed"),
        offline=unparsed_fail,
        description="Standardize an exam item the rules could not parse (question, options, "
        "answer).",
    )
)


# --- distractor writer -------------------------------------------------------------------------


class DistractorOptions(BaseModel):
    """Options of the distractor writer."""

    model_config = ConfigDict(extra="forbid")

    options: int = Field(default=4, ge=2, le=8)
    """Options an objective item should have."""
    check_prompt: str = "edu/distractor-check.md"
    """The back-check's prompt: is a proposed distractor also a right answer?"""


def _short(view: BuildView, options: BaseModel) -> list[EduItem]:
    assert isinstance(options, DistractorOptions)
    return [
        i
        for i in view.of_type(EduItem)
        if i.shape in OBJECTIVE and i.options and len(i.options) < options.options
    ]


def _plan_short(view: BuildView, options: BaseModel) -> list[ItemTask]:
    return [ItemTask(item) for item in _short(view, options)]


async def complete_options(task: ItemTask, ctx: AgentContext) -> AgentResult:
    """Propose the missing wrong options, keep those the back-check confirms are wrong."""
    item = task.record
    options = ctx.options
    assert isinstance(options, DistractorOptions) and item.options
    needed = options.options - len(item.options)
    proposal = await _ask(
        ctx,
        {"question": item.prompt, "options": item.options, "answer": item.answer, "needed": needed},
        Distractors,
    )
    proposed = proposal.value.options if proposal.value else []
    fresh = list(
        dict.fromkeys(
            o.strip() for o in proposed if o.strip() and o.strip() not in item.options.values()
        )
    )
    answer = item.options[item.answer]
    verdicts = await asyncio.gather(
        *(
            _ask(
                ctx,
                {"question": item.prompt, "answer": answer, "option": o},
                DistractorCheck,
                options.check_prompt,
            )
            for o in fresh
        )
    )
    wrong = [
        o
        for o, v in zip(fresh, verdicts, strict=True)
        if v.value is not None and not v.value.correct
    ]
    kept = wrong[:needed]
    if len(kept) < needed:
        note = f"only {len(item.options) + len(kept)} options after the agent"
        return AgentResult([], "flagged", flags={item.id: [note]})
    letters = [chr(ord("A") + k) for k in range(len(item.options), options.options)]
    completed = item.model_copy(
        update={
            "options": {**item.options, **dict(zip(letters, kept, strict=True))},
            "provenance": [
                *item.provenance,
                f"distractors: {len(kept)} added by agent, back-checked wrong",
            ],
        }
    )
    return AgentResult([completed], "completed")


def flag_short(view: BuildView, options: BaseModel) -> NodeUpdate:
    """With agents off, items with too few options are counted, not flagged.

    Nothing was tried on them, and a reviewer has no distractors to accept or reject: the
    stage's `short` says how many keep their own options (items the agent could not complete,
    with agents on, are flagged).
    """
    short = _short(view, options)
    return NodeUpdate(counts={"short": len(short), "completed": 0})


agent(
    AgentSpec(
        name="distractor-writer",
        run=complete_options,
        plan=_plan_short,
        options=DistractorOptions,
        planned="short",
        outcomes=("completed", "flagged"),
        offline=flag_short,
        description="Complete an objective item's options with back-checked wrong ones.",
    )
)


# --- level router ------------------------------------------------------------------------------


class RouteOptions(BaseModel):
    """Options of the level router's cross-check."""

    model_config = ConfigDict(extra="forbid")

    embedding_model: str = "tfidf-char"
    """Text vectors of the verification classifier: `tfidf-char` (character n-grams, any
    script), `minilm` (reads English; most Chinese characters are [UNK] to it), or a
    sentence-transformers folder or hub id."""
    min_per_level: int = Field(default=2, ge=2)
    """Items of a level needed before the classifier learns it."""
    min_confidence: float = Field(default=0.7, ge=0, le=1)
    """A classifier's other level is flagged only when it gives it at least this probability:
    a weak classifier's every disagreement would bury the few a reviewer should see."""
    min_df: int = Field(default=5, ge=1)
    """`tfidf-char` columns kept: n-grams found in at least this many items."""
    chars: int = Field(default=1000, ge=50)
    """Characters of each prompt the classifier reads (a passage's start says its kind)."""


def _plan_items(view: BuildView, options: BaseModel) -> list[ItemTask]:
    return [ItemTask(item) for item in view.of_type(EduItem)]


async def route(task: ItemTask, ctx: AgentContext) -> AgentResult:
    """The router's verdict on one item, kept on the item."""
    from .taxonomy import level as find_level
    from .taxonomy import router_guide

    item = task.record
    outcome = await _ask(ctx, {"guide": router_guide(), "item": item.prompt[:1500]}, Route)
    if outcome.value is None:
        verdict: dict[str, Any] = {"router": None, "error": outcome.error}
    else:
        try:
            routed: str | None = find_level(outcome.value.level).id
        except Exception:  # noqa: BLE001 - an unknown level name from the model
            routed = None
        verdict = {
            "router": routed,
            "secondary": outcome.value.secondary,
            "dok": outcome.value.dok,
            "reason": outcome.value.reason,
        }
    return AgentResult([item.model_copy(update={"route": verdict})], None)


async def cross_check(view: BuildView, options: BaseModel, env: NodeEnv) -> NodeUpdate:
    """The classifier's level beside the layout's and the router's; disagreements flagged.

    The router's level is flagged whenever it differs from the layout's; the classifier's
    only when it gives its other level a probability of `min_confidence` or more.
    """
    assert isinstance(options, RouteOptions)
    items = view.of_type(EduItem)
    predicted = cross_validated_labels(
        {i.id: i.prompt[: options.chars] for i in items},
        {i.id: i.level for i in items},
        env.embed,
        options.embedding_model,
        options.min_per_level,
        options.min_df,
    )
    update = NodeUpdate()
    differ = 0
    for item in items:
        entry = dict(item.route or {})
        entry["layout"] = item.level
        found = predicted.get(item.id)
        entry["classifier"] = found.label if found else None
        entry["classifier_p"] = round(found.confidence, 3) if found else None
        differ += int(found is not None and found.label != item.level)
        votes = {entry["router"]} if entry.get("router") else set()
        if found and found.confidence >= options.min_confidence:
            votes.add(found.label)
        if votes and votes != {item.level}:
            update.flags[item.id] = [
                f"level: layout {item.level}, router {entry.get('router')}, "
                f"classifier {entry['classifier']} (p={entry['classifier_p']})"
            ]
        update.records.append(item.model_copy(update={"route": entry}))
    flagged = len(update.flags)
    update.counts = {
        "routed": len(items),
        "agree": len(items) - flagged,
        "flagged": flagged,
        "classifier_differs": differ,
    }
    return update


agent(
    AgentSpec(
        name="level-router",
        run=route,
        plan=_plan_items,
        options=RouteOptions,
        planned=None,
        finish=cross_check,
        description="Route an item to its dominant cognitive level (two-step principle).",
    )
)
