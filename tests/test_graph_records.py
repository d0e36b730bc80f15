"""The typed records the graphs carry: agent tasks, build failures, judge verdicts, and the
build graph's reducers merging an offline step with its finish step."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel

from gramagents.agents.base import AgentSpec, AgentTask, InstanceTask
from gramagents.judging.verdict import Verdict
from gramagents.records import GrammarPoint, Instance
from gramagents.tasks.registry import BankBuilderSpec, BuildResources
from gramagents.workflow.build_graph import AgentStage, BuildContext, build_graph
from gramagents.workflow.nodes import BuildFailure, BuildView, NodeEnv, NodeUpdate, NoOptions


class Word(BaseModel):
    id: str
    text: str


def _point() -> GrammarPoint:
    return GrammarPoint(id="p1", category="c", name="n", description="d", level=1, language="en")


def _instance(n: int) -> Instance:
    return Instance(id=f"p1/ex/{n}", point_id="p1", text="I can swim.")


@dataclass(frozen=True)
class BatchTask(AgentTask):
    words: list[Word]
    note: object


def test_a_task_is_described_by_its_fields_with_records_by_id():
    task = InstanceTask(_instance(0), _point())
    assert task.described() == {"instance": "p1/ex/0", "point": "p1"}
    batch = BatchTask([Word(id="a", text="x"), Word(id="b", text="y")], note=3.5)
    assert batch.described() == {"words": ["a", "b"], "note": 3.5}
    # anything else that is not a plain value is named by its text
    assert BatchTask([], note=("x",)).described() == {"words": "[]", "note": "('x',)"}


def test_a_failure_keeps_the_order_of_the_fields_it_was_given():
    given = {"id": "w1", "duplicates": "w0", "reason": "near-duplicate", "jaccard": 0.9}
    failure = BuildFailure.of("dedup", given)
    assert (failure.stage, failure.reason, failure.subject) == (
        "dedup",
        "near-duplicate",
        {"id": "w1", "duplicates": "w0"},
    )
    assert list(failure.as_json().items()) == [("stage", "dedup"), *given.items()]
    own_stage = BuildFailure.of("standardize", {"stage": "ingest", "source": "f:3", "text": "…"})
    assert own_stage.as_json() == {"stage": "ingest", "source": "f:3", "text": "…"}
    assert own_stage.reason is None
    null = BuildFailure.of("s", {"id": "x", "reason": None, "more": 1})
    assert list(null.as_json()) == ["stage", "id", "reason", "more"]
    agent = BuildFailure(
        "rewrite", "bad", agent="rewriter", subject={"point": "p1"}, details={"raw": "?"}
    )
    assert list(agent.as_json().items()) == [
        ("stage", "rewrite"), ("agent", "rewriter"), ("point", "p1"), ("reason", "bad"),
        ("raw", "?"),
    ]  # fmt: skip


def test_a_verdict_is_recorded_as_the_score_line_says_it():
    verdict = Verdict("r", "1", "h", (0.0, 10.0), "scripted:j")
    assert not verdict.judged
    verdict.error, verdict.unreachable = "timeout", True
    assert verdict.as_details() == {
        "rubric": "r", "rubric_version": "1", "rubric_hash": "h", "scale": [0.0, 10.0],
        "judge": "scripted:j", "error": "timeout", "unreachable": True,
    }  # fmt: skip
    judged = Verdict("r", "1", "h", (0.0, 10.0), "scripted:j", {"a": 4.0}, 4.0, "ok")
    assert judged.judged
    assert list(judged.as_details())[-3:] == ["dimensions", "total", "reason"]


def _offline(view: BuildView, options: BaseModel) -> NodeUpdate:
    return NodeUpdate(records=[Word(id="made", text="new")], removed=["w0"], counts={"seen": 2})


async def _finish(view: BuildView, options: BaseModel, env: NodeEnv) -> NodeUpdate:
    # the finish step sees what the offline step changed, merged by the state's reducers
    seen = ",".join(view.records)
    return NodeUpdate(counts={"seen": 1}, failures=[{"id": seen, "reason": "finish saw"}])


def test_an_offline_step_and_its_finish_are_merged_by_the_graphs_reducers():
    spec = AgentSpec(name="toy", run=None, plan=None, offline=_offline, finish=_finish)  # type: ignore[arg-type]
    stage = AgentStage(name="toy-node", spec=spec, options=NoOptions(), context=None)
    context = BuildContext(
        stages=[stage],
        builder_name="banks",
        builder=BankBuilderSpec("b", lambda view, *rest: [], {}, NoOptions),
        builder_options=NoOptions(),
        tasks={},
        resources=BuildResources(seed=1, embed=lambda texts, kind: []),
        env=NodeEnv(agents_on=False, seed=1, embed=lambda texts, kind: []),
    )
    start = {"records": {w.id: w for w in (Word(id="w0", text="a"), Word(id="w1", text="b"))}}
    state = asyncio.run(
        build_graph([stage]).ainvoke(start, config={"configurable": {"build": context}})
    )
    assert list(state["records"]) == ["w1", "made"]
    assert state["tallies"]["toy-node"] == {"seen": 3}
    assert [f.as_json() for f in state["failures"]] == [
        {"stage": "toy-node", "id": "w1,made", "reason": "finish saw"}
    ]
