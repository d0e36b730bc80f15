"""The engine's checks of what agents write, shared by the recipes' output models."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from gramagents.agents.base import calls_to_reach
from gramagents.agents.checks import Reason, not_copied, one_line
from gramagents.records import GrammarPoint, Instance
from gramagents.workflow.nodes import BuildView


def test_one_line_refuses_what_is_no_single_sentence():
    for value, says in [
        ("   ", "is empty"),
        ("One.\nTwo.", "on one line"),
        ("la la la la la la", "repeats itself"),
    ]:
        with pytest.raises(ValueError, match=says):
            one_line(value)


def test_one_line_keeps_a_sentence_stripped_and_names_the_field():
    assert one_line("  The cat sat.  ") == "The cat sat."
    with pytest.raises(ValueError, match="the correction is empty"):
        one_line("", "correction")


def test_not_copied_refuses_a_piece_of_the_instructions():
    instructions = "Write one new sentence that uses the point 把."
    with pytest.raises(ValueError, match="copies the instructions"):
        not_copied("write one new sentence", instructions)
    assert not_copied("我把书放在桌子上。", instructions) == "我把书放在桌子上。"
    assert not_copied("new", instructions) == "new"  # too short to count as a copy


def test_a_reason_field_is_stripped_and_never_empty():
    class Verdict(BaseModel):
        ok: bool
        reason: Reason = Field(description="why")

    assert Verdict(ok=True, reason="  fine  ").reason == "fine"
    with pytest.raises(ValidationError, match="give a one-sentence reason"):
        Verdict(ok=True, reason=" ")


def test_calls_to_reach_counts_only_accepted_instances_of_the_kind():
    points = {
        p: GrammarPoint(id=p, category="c", level=1, name=p, language="en") for p in ("a", "b")
    }
    have = [
        Instance(id="a1", point_id="a", text="x", kind="pair"),
        Instance(id="a2", point_id="a", text="y", kind="pair", status="rejected"),
        Instance(id="a3", point_id="a", text="z", kind="confuser"),
        Instance(id="b1", point_id="b", text="w", kind="pair"),
        Instance(id="b2", point_id="b", text="v", kind="pair"),
    ]
    view = BuildView({i.id: i for i in have}, {"points": points})
    tasks = calls_to_reach(view, "pair", 2)
    assert [(t.point.id, t.index) for t in tasks] == [("a", 0)]
    assert len(calls_to_reach(view, "confuser", 3)) == 2 + 3


def test_ask_renders_the_prompt_and_numbers_a_sample_by_its_seed_and_cache_key():
    import asyncio

    from gramagents.agents.base import AgentContext
    from gramagents.records import GenParams
    from gramagents.templates import load_prompt

    asked = []

    class Model:
        label = "recording"

        async def structured(self, request, schema, *, context=None, max_reasks=2):
            asked.append((request, schema, context, max_reasks))
            return "answer"

    class Plural(BaseModel):
        plural: str

    ctx = AgentContext(
        model=Model(),
        prompt="raw.md",
        params=GenParams(seed=7),
        max_reasks=3,  # type: ignore[arg-type]
    )
    template = load_prompt("raw.md")
    assert asyncio.run(ctx.ask(template, {"text": "one cat"}, Plural)) == "answer"
    asyncio.run(ctx.ask(template, {"text": "one cat"}, Plural, sample=2, context={"n": 1}))
    (first, schema, context, reasks), (second, _, context2, _) = asked
    assert first.messages == template.render({"text": "one cat"})
    assert (first.params.seed, first.sample, first.prompt_hash) == (7, 0, template.hash)
    assert (schema, reasks) == (Plural, 3)
    assert context == {"prompt": first.messages[-1].content}
    assert (second.params.seed, second.sample) == (2, 2)
    assert context2 == {"prompt": second.messages[-1].content, "n": 1}
