"""Whole evals under injected faults, and answers kept as they arrive (bench/faults.py at small
scale): every item recorded once, the scores of an undisturbed run, the requests the fault
plan and the retry policy imply."""

import asyncio

import pytest

from gramagents.models import BackendSettings, Model, create_backend
from gramagents.records import ChatRequest, GenParams, Message
from gramagents.runtime.cache import ResponseCache
from gramagents.runtime.retry import RetryPolicy
from gramagents.testing.drills import (
    check_run,
    cli_env,
    drill_answer,
    eval_command,
    fault_plan,
    implied_requests,
    run_cli,
    write_drill_dataset,
)
from gramagents.testing.openai_server import FakeChatServer, Fault


@pytest.mark.slow
def test_an_eval_under_faults_of_every_kind_loses_and_repeats_nothing(tmp_path):
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 100)
    plan = fault_plan(0.2, seed=3, hang_s=3.0)
    with FakeChatServer(responder=drill_answer) as server:
        run = lambda name: run_cli(  # noqa: E731
            eval_command(dataset, server.base_url, tmp_path / name, concurrency=100, timeout=2.0),
            cli_env(tmp_path / f"{name}.sqlite"),
            tmp_path,
        )
        reference = run("reference")
        assert reference.returncode == 0, reference.stderr
        budget, doomed = implied_requests(plan, server.chat_requests(), RetryPolicy())
        server.reset(plan)
        faulty = run("faulty")
        assert faulty.returncode == 0, faulty.stderr
        stats = server.stats()
    check = check_run(tmp_path / "reference", tmp_path / "faulty", 100)
    assert (check.status, check.survived, check.duplicated, check.identical) == (
        "complete",
        100,
        0,
        True,
    )
    assert doomed == 0 and stats["chat_requests"] == budget > 110
    kinds = set(stats["counts"]) - {"answered"}
    assert kinds == set(plan.kinds) - {"invalid"}  # plain completions never ask for a schema


def test_an_api_model_keeps_each_answer_as_it_arrives(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    policy = RetryPolicy(initial_backoff=0.01, max_backoff=0.05, jitter=0.0)

    async def scenario(server: FakeChatServer) -> tuple[int, bool]:
        spec = f"openai:fake@{server.base_url}?timeout=0.5"
        model = Model(create_backend(spec, BackendSettings(concurrency=8, retry=policy)), cache)
        requests = [
            ChatRequest(messages=[Message(role="user", content=f"q{i}")], params=GenParams())
            for i in range(6)
        ]
        task = asyncio.create_task(model.generate(requests))
        while len(cache) < 5 and not task.done():
            await asyncio.sleep(0.01)
        kept, still_out = len(cache), not task.done()
        answers = await task
        await model.backend.aclose()
        assert all(a.error is None for a in answers)
        return kept, still_out

    with FakeChatServer() as server:
        server.inject(Fault("slow", hang_s=1.0))  # the first request waits out the timeout
        kept, still_out = asyncio.run(scenario(server))
    assert kept == 5 and still_out  # five answers stored while the sixth was still retrying
    assert len(cache) == 6
    cache.close()
