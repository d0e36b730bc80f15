"""Models that only echo, refuse or hedge score nothing, end to end.

A server on 127.0.0.1 that always gives one kind of reply answers released-style CPG banks
(the released CSV layout), syntax-QA and EduEval banks, and GEC banks, through `gramagents
eval`'s graph: the chains see the prompt that was sent, and every invalid answer's reason is
in the records, the summary and the report.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from gramagents.recipes.cpg.released_writer import write_released
from gramagents.records import Item
from gramagents.testing.openai_server import FakeChatServer, always, echo_prompt, last_user_text
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import EXAMPLE_TABLE, ROOT

RELEASED = ("SINGLE-T", "SINGLE-F", "BATCH-T", "CON-INS-F10")
REFUSAL = "对不起，我无法判断。"
HEDGE = "可能是T，也可能是F。"


def evaluate(dataset: Path, spec: str, run: Path, fast_retry, **options) -> dict[str, dict]:
    """Per task: the summary row of the task's headline metric."""
    result = asyncio.run(
        run_eval(
            dataset,
            EvalOptions(
                models=[spec], run_dir=run, view=False, retry=fast_retry, concurrency=8, **options
            ),
        )
    )
    assert result.manifest.status == "complete"
    rows = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    headline: dict[str, dict] = {}
    for row in rows:
        headline.setdefault(row["task"], row)  # a task's first row is its headline
    return headline


def reasons(run: Path) -> Counter[tuple[str, str | None]]:
    lines = (run / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return Counter(
        (r["task"], r.get("invalid_reason")) for r in map(json.loads, lines) if r["invalid"]
    )


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """SINGLE-T, SINGLE-F, BATCH-T and CON-INS-F10 of the example table, as released files."""
    work = tmp_path_factory.mktemp("released")
    built = asyncio.run(
        run_build("cpg", BuildOptions(source=EXAMPLE_TABLE, agents=False, run_dir=work / "b"))
    )
    items = [i for i in built.items if i.meta["language"] == "zh" and i.task in RELEASED]
    write_released(items, work / "question_bank")
    return work / "question_bank"


MODES = {
    "echo": echo_prompt,
    "refuse": always(REFUSAL),
    "fullwidth": always("Ｔ"),
    "allf": always("全部是F"),
    "hedge": always(HEDGE),
}


def test_released_banks_give_nothing_to_echoes_refusals_and_hedges(released, tmp_path, fast_retry):
    found: dict[str, dict[str, dict]] = {}
    with FakeChatServer() as server:
        for mode, responder in MODES.items():
            server.responder = responder
            spec = f"openai:{mode}@{server.base_url}"  # a model per mode: no shared cache
            run = tmp_path / mode
            found[mode] = evaluate(released, spec, run, fast_retry, fmt="cpg-eval", limit=12)
            if mode == "echo":
                assert set(reasons(run).values()) and {r for _, r in reasons(run)} == {"echo"}
                report = (run / "report.md").read_text(encoding="utf-8")
                assert "## Invalid answers by reason" in report
                label = f"openai:{mode}"  # the model is named without its endpoint
                assert f"| {label} | SINGLE-T | 12 | 12 | 12 |" in report  # answers, invalid, echo
    assert set(found["echo"]) == set(RELEASED)
    for task in RELEASED:
        assert found["echo"][task]["invalid_rate"] >= 0.95, task
        assert found["refuse"][task]["invalid_rate"] == 1.0, task
        assert found["hedge"][task]["invalid_rate"] == 1.0, task
        assert found["echo"][task]["score"] <= 0.05, task
    assert found["fullwidth"]["SINGLE-T"]["score"] == 1.0
    assert found["fullwidth"]["SINGLE-T"]["invalid_rate"] == 0.0
    assert found["allf"]["SINGLE-F"]["score"] == 1.0
    assert found["allf"]["CON-INS-F10"]["score"] == 1.0
    assert found["allf"]["BATCH-T"]["score"] == 0.0


def _subset(dataset: Path, folder: Path, keep) -> Path:
    """The items of `dataset` that `keep` accepts, as a dataset file of their own."""
    lines = dataset.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if keep(Item.model_validate_json(line))]
    path = folder / "dataset.jsonl"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def syntax_and_edu(tmp_path_factory) -> Path:
    """Syntax-QA and EduEval example items the chat server can answer (no judged tasks)."""
    work = tmp_path_factory.mktemp("syntax-edu")
    lines = []
    for recipe, source in (("syntax-qa", "examples/syntax"), ("edu", "examples/edu")):
        built = asyncio.run(
            run_build(
                recipe, BuildOptions(source=ROOT / source, agents=False, run_dir=work / recipe)
            )
        )
        lines += [
            i.model_dump_json()
            for i in built.items
            if i.answer is not None and i.task not in ("EDU-QG", "EDU-TD", "EDU-TW")
        ]
    path = work / "dataset.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_syntax_and_edu_chains_give_nothing_to_echoes_and_refusals(
    syntax_and_edu, tmp_path, fast_retry
):
    with FakeChatServer() as server:
        for mode, responder in (("echo", echo_prompt), ("refuse", always(REFUSAL))):
            server.responder = responder
            summary = evaluate(
                syntax_and_edu,
                f"openai:{mode}@{server.base_url}",
                tmp_path / mode,
                fast_retry,
                limit=6,
            )
            assert {t.split("-")[0] for t in summary} == {"SYNTAX", "EDU"}
            for task, row in summary.items():
                assert row["invalid_rate"] >= (0.95 if mode == "echo" else 1.0), (mode, task)
            assert {r for _, r in reasons(tmp_path / mode)} == {
                "echo" if mode == "echo" else "refusal"
            }


def _student_text(body: dict) -> str:
    """The GEC prompt's student text, returned unchanged (the line between the instructions)."""
    return last_user_text(body).splitlines()[1]


@pytest.mark.slow
def test_gec_reads_an_unchanged_sentence_as_a_correction_and_an_echo_as_none(tmp_path, fast_retry):
    built = asyncio.run(
        run_build(
            "gec",
            BuildOptions(
                source=ROOT / "examples" / "gec" / "grammar-items.jsonl",
                agents=False,
                run_dir=tmp_path / "b",
            ),
        )
    )
    dataset = _subset(built.dataset_path, tmp_path, lambda i: i.task != "GEC-PAIR")
    with FakeChatServer() as server:
        server.responder = _student_text
        unchanged = evaluate(
            dataset, f"openai:same@{server.base_url}", tmp_path / "same", fast_retry, limit=5
        )
        server.responder = echo_prompt
        echoed = evaluate(
            dataset, f"openai:echo@{server.base_url}", tmp_path / "echo", fast_retry, limit=5
        )
    for task in ("GEC-BASELINE", "GEC-GUIDED"):
        assert unchanged[task]["invalid_rate"] == 0.0
        assert echoed[task]["invalid_rate"] == 1.0
    responses = [
        json.loads(line)
        for line in (tmp_path / "same" / "responses.jsonl").read_text().splitlines()
    ]
    assert all(r["extracted"] == r["raw"] for r in responses)
