"""Rubric judges in the eval graph: judged scores, the rubric hash in the cache key."""

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.workflow.eval import EvalOptions, run_eval

ROOT = Path(__file__).resolve().parent.parent


def full_marks(request):
    """A judge that gives every dimension its full points (read off the response schema)."""
    schema = request.response_schema
    dims = {
        prop.get("title") or name: prop["maximum"]
        for name, prop in schema["properties"].items()
        if name not in ("total", "reason")
    }
    return json.dumps({**dims, "total": sum(dims.values()), "reason": "ok"}, ensure_ascii=False)


ScriptedBackend.register("edu-writer", lambda request: "这是一篇关于春天的短文。" * 3)
ScriptedBackend.register("full-marks", full_marks)


def judged_dataset(path: Path) -> Path:
    items = []
    for task, n in (("EDU-QG", 2), ("EDU-TW", 3)):
        for k in range(n):
            items.append(
                Item(
                    id=f"{task}-{k}",
                    task=task,
                    prompt=PromptParts(
                        template="edu/open.md", vars={"prompt": f"{task} 题目 {k}", "shots": []}
                    ),
                    meta={"level": "Creativity", "subject": "语文"},
                )
            )
    write_jsonl_atomic(path, items)
    return path


def evaluate(dataset: Path, run_dir: Path):
    options = EvalOptions(
        models=["scripted:edu-writer"], judge="scripted:full-marks", run_dir=run_dir
    )
    return asyncio.run(run_eval(dataset, options))


def test_editing_one_rubric_re_judges_only_its_items(in_tmp):
    shutil.copytree(ROOT / "rubrics", in_tmp / "rubrics")  # the user's editable copies
    dataset = judged_dataset(in_tmp / "dataset.jsonl")

    first = evaluate(dataset, in_tmp / "first").manifest
    assert first.status == "complete"
    assert first.judge["requests_sent"] == 5
    assert first.counts.requests_sent == 5 + 5  # five answers, five judgments
    scores = [json.loads(x) for x in (in_tmp / "first" / "scores.jsonl").read_text().splitlines()]
    assert {s["scores"]["judge_pct"] for s in scores} == {100.0}
    assert all(s["details"]["judge"]["rubric_hash"] for s in scores)
    assert {s["details"]["answer_chars"] for s in scores} == {36}

    # Same rubrics: everything from the cache.
    again = evaluate(dataset, in_tmp / "again").manifest
    assert again.counts.requests_sent == 0

    # Edit one sub-criterion of the text-writing rubric: only its three items are judged again.
    path = in_tmp / "rubrics" / "text-writing.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("rubric", "rubric (edited)", 1), encoding="utf-8")
    edited = evaluate(dataset, in_tmp / "edited").manifest
    assert edited.judge["requests_sent"] == 3
    assert edited.counts.requests_sent == 3
    assert edited.hashes["rubrics/text-writing"] != first.hashes["rubrics/text-writing"]
    assert (
        edited.hashes["rubrics/question-generation"] == first.hashes["rubrics/question-generation"]
    )


def test_a_broken_rubric_stops_the_eval_with_one_line(in_tmp):
    shutil.copytree(ROOT / "rubrics", in_tmp / "rubrics")
    path = in_tmp / "rubrics" / "question-generation.md"
    path.write_text(path.read_text(encoding="utf-8").replace("points: 20", "points: 25", 1))
    dataset = judged_dataset(in_tmp / "dataset.jsonl")
    with pytest.raises(InputError, match="question-generation.md"):
        evaluate(dataset, in_tmp / "broken")


def down(request):
    raise ConnectionError("judge server down")


ScriptedBackend.register("judge-down", down)


def test_an_unreachable_judge_leaves_the_items_to_be_judged_on_resume(in_tmp):
    dataset = judged_dataset(in_tmp / "dataset.jsonl")
    options = EvalOptions(
        models=["scripted:edu-writer"], judge="scripted:judge-down", run_dir=in_tmp / "r"
    )
    manifest = asyncio.run(run_eval(dataset, options)).manifest
    assert manifest.status == "partial" and manifest.counts.failed == 5
    assert not (in_tmp / "r" / "scores.jsonl").read_text().strip()
    resumed = evaluate(dataset, in_tmp / "r").manifest  # the judge is back
    assert resumed.status == "complete" and resumed.judge["requests_sent"] == 5
    assert resumed.counts.requests_sent == 5  # the answers themselves are not asked again


def test_the_judge_prompt_is_loaded_once_per_run_and_hashed_into_requests_and_manifest(
    in_tmp, monkeypatch
):
    import gramagents.judging.rubric as rubric_module
    import gramagents.workflow.eval as eval_module
    from gramagents.judging.rubric import JUDGE_PROMPT
    from gramagents.templates import load_prompt

    loads: list[str] = []

    def counted(name):
        loads.append(name)
        return load_prompt(name)

    monkeypatch.setattr(eval_module, "load_prompt", counted)
    monkeypatch.setattr(rubric_module, "load_prompt", counted)
    hashes: list[str | None] = []

    def judge(request):
        hashes.append(request.prompt_hash)
        return full_marks(request)

    ScriptedBackend.register("hash-keeping-judge", judge)
    dataset = judged_dataset(in_tmp / "dataset.jsonl")
    options = EvalOptions(
        models=["scripted:edu-writer"], judge="scripted:hash-keeping-judge", run_dir=in_tmp / "r"
    )
    manifest = asyncio.run(run_eval(dataset, options)).manifest
    assert manifest.status == "complete"
    assert loads.count(JUDGE_PROMPT) == 1  # five answers judged, one load
    assert hashes == [load_prompt(JUDGE_PROMPT).hash] * 5
    assert manifest.hashes[f"prompts/{JUDGE_PROMPT}"] == hashes[0]  # the run records it
