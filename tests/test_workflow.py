"""Build and eval graphs end to end with a scripted model (answers known in advance)."""

import asyncio
import json
import re
from pathlib import Path

import pytest

from gramagents.errors import RunError
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import ChatRequest
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import EXAMPLE_TABLE

RUN_FILES = {"manifest.json", "responses.jsonl", "scores.jsonl", "summary.json", "report.md"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def agent_script(request: ChatRequest) -> str:
    """Rewrites every example (E101's are rejected, E102's cannot be judged), writes confusing
    instances (E112's are judged to contain the point after all)."""
    prompt = next(m.content for m in request.messages if m.role == "user")
    if "point_absent" in prompt:
        sentence = re.search(r"(?:Sentence|句子)[:：] ?(.+)", prompt).group(1)
        present = sentence.startswith("Confusing (E112)")
        return json.dumps(
            {
                "point_absent": not present,
                "natural": True,
                "reason": "the point is there" if present else "only the form",
            }
        )
    if "contains_point" in prompt:
        sentence = re.search(r"(?:Sentence|句子)[:：] ?(.+)", prompt).group(1)
        if sentence.startswith("Rewritten (E101)"):
            return '{"contains_point": false, "natural": true, "reason": "the modal is gone"}'
        if sentence.startswith("Rewritten (E102)"):
            return "no idea"
        return '{"contains_point": true, "natural": true, "reason": "it uses the point"}'
    point = re.search(r"\[(.+?)\]", prompt).group(1)
    code = next((c for c, name in POINT_CODES.items() if name in point), "other")
    if "partial-form" in prompt:
        return json.dumps(
            {
                "sentence": f"Confusing ({code}) {request.sample}",
                "kind": "same-form",
                "reason": "shares a word",
            }
        )
    example = re.search(r"(?:Example|例句)[:：] ?(.+)", prompt).group(1)
    return json.dumps({"sentence": f"Rewritten ({code}) {example}"}, ensure_ascii=False)


POINT_CODES = {"E101": "can for ability", "E102": "must for obligation", "E112": "past continuous"}


SINGLE_ONLY = """\
recipe: cpg-single
source: grammar-table
nodes:
  - name: banks
    builder: cpg
    tasks:
      SINGLE-T: {}
      SINGLE-F: {}
"""


def build(tmp_path: Path, agents: bool = True, limit: int | None = None, recipe: str = "cpg"):
    ScriptedBackend.register("agents", agent_script)
    options = BuildOptions(
        source=EXAMPLE_TABLE,
        agents=agents,
        agent_model="scripted:agents",
        run_dir=tmp_path / "build",
        limit=limit,
    )
    return asyncio.run(run_build(recipe, options))


def single_banks(tmp_path: Path) -> tuple[Path, int]:
    """A dataset of SINGLE-T and SINGLE-F only, and its size."""
    recipe = tmp_path / "single.yaml"
    recipe.write_text(SINGLE_ONLY, encoding="utf-8")
    result = build(tmp_path, agents=False, recipe=str(recipe))
    return result.dataset_path, len(result.items)


def test_build_with_agents_keeps_verdicts_and_falls_back_to_source(tmp_path):
    from gramagents.recipes.cpg.table import read_grammar_table

    points = read_grammar_table(EXAMPLE_TABLE)
    examples = sum(len(p.examples) for p in points)
    to_write = {p.id: max(0, 10 - len(p.confusers)) for p in points}
    result = build(tmp_path)
    instances = {i.id: i for i in result.instances}
    ok = instances["1001/ex/0/rw"]
    assert ok.status == "accepted" and ok.origin == "agent" and ok.replaces == "1001/ex/0"
    assert ok.provenance.checks[0].passed and ok.provenance.checks[0].model == "scripted:agents"
    assert ok.provenance.prompt_hash and ok.provenance.agent == "instance-rewriter"
    rejected = instances["E101/ex/0/rw"]
    assert rejected.status == "rejected"
    assert rejected.provenance.checks[0].reason == "the modal is gone"
    unjudged = instances["E102/ex/0/rw"]
    assert (
        unjudged.status == "failed" and "instance-backcheck failed" in unjudged.provenance.notes[0]
    )
    confuser = instances["1003/cf-gen/0"]
    assert confuser.kind == "confuser" and confuser.status == "accepted"
    assert confuser.annotations["confusion"] == "same-form" and confuser.provenance.checks[0].passed
    assert instances["E112/cf-gen/0"].status == "rejected"

    items = {i.id: i for i in result.items}
    assert items["SINGLE-T/1001/ex/0/rw"].prompt.vars["sentence"].startswith("Rewritten (other)")
    assert items["SINGLE-T/E101/ex/0"].prompt.vars["sentence"] == "She can swim very well."
    assert "SINGLE-T/E102/ex/0" in items
    assert items["SINGLE-T/1001/ex/0/rw"].meta["provenance"]["checks"][0]["passed"] is True
    f10 = items["CON-INS-F10/1003"]  # 想 had 2 confusing instances; 8 were written
    assert sum(s.startswith("Confusing") for s in f10.prompt.vars["sentences"]) == 8
    assert "CON-INS-F10/E112" not in items  # its written ones were rejected: 2 of 10 left

    stages = result.manifest.stages
    e101, e102 = (len(p.examples) for p in points if p.id in ("E101", "E102"))
    assert stages["rewrite"] == {"planned": examples, "rewritten": examples}
    assert stages["backcheck"] == {
        "planned": examples,
        "accepted": examples - e101 - e102,
        "rejected": e101,
        "failed": e102,
    }
    assert stages["confusers"] == {
        "planned": sum(to_write.values()),
        "generated": sum(to_write.values()),
    }
    assert stages["confuser-check"]["rejected"] == to_write["E112"] == 8
    assert result.manifest.counts.failed == e102 and result.manifest.status == "complete"
    folder = tmp_path / "build"
    for name in ("instances.jsonl", "points.jsonl", "recipe.yaml", "failures.jsonl", "review.csv"):
        assert (folder / name).is_file(), name
    failures = lines(folder / "failures.jsonl")
    assert len(failures) == e102 and failures[0]["stage"] == "backcheck"
    report = (folder / "report.md").read_text()
    assert "| backcheck |" in report and "CON-INS-F10" in report


def test_rebuilding_asks_nothing_again(tmp_path):
    first = build(tmp_path)
    second = build(tmp_path)
    assert first.manifest.counts.requests_sent > 0
    assert second.manifest.counts.requests_sent == 0
    assert second.manifest.counts.cache_hits == first.manifest.counts.requests_sent
    assert [i.id for i in first.items] == [i.id for i in second.items]


def always_t(request: ChatRequest) -> str:
    return "T"


def evaluate(dataset: Path, run_dir: Path, spec: str = "scripted:always-t", **kwargs):
    ScriptedBackend.register("always-t", always_t)
    return asyncio.run(run_eval(dataset, EvalOptions(models=[spec], run_dir=run_dir, **kwargs)))


def test_eval_writes_the_run_folder_contract(tmp_path):
    dataset, n = single_banks(tmp_path)
    result = evaluate(dataset, tmp_path / "eval")
    folder = tmp_path / "eval"
    assert RUN_FILES <= {p.name for p in folder.iterdir()}
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in (
        "run_id",
        "kind",
        "command",
        "recipe",
        "models",
        "seed",
        "versions",
        "hashes",
        "status",
        "counts",
    ):
        assert key in manifest
    assert manifest["kind"] == "eval" and manifest["status"] == "complete"
    assert manifest["counts"] == {
        "items": n,
        "requests_sent": n,
        "cache_hits": 0,
        "invalid": 0,
        "failed": 0,
        "not_asked": 0,
        "shared": 0,
    }
    assert "dataset" in manifest["hashes"] and "prompts/cpg/single.zh.md" in manifest["hashes"]
    responses = lines(folder / "responses.jsonl")
    assert len(responses) == n and responses[0]["raw"] == "T" and "latency_s" in responses[0]
    scores = lines(folder / "scores.jsonl")
    assert len({(s["model"], s["item_id"]) for s in scores}) == n
    summary = json.loads((folder / "summary.json").read_text())
    by_task = {row["task"]: row for row in summary}
    assert set(by_task["SINGLE-T"]) == {"model", "task", "n", "metric", "score", "invalid_rate"}
    assert (by_task["SINGLE-T"]["score"], by_task["SINGLE-F"]["score"]) == (1.0, 0.0)
    report = (folder / "report.md").read_text()
    assert "| scripted:always-t | 1.000 | 0.000 | 0.000 | 0.000 | 0.500 |" in report
    assert "| RANDOM | 0.500 | — | 0.500 | — | 0.500 |" in report
    assert result.report_path == folder / "report.md"


def test_rerunning_with_the_same_run_dir_sends_nothing(tmp_path):
    dataset, n = single_banks(tmp_path)
    evaluate(dataset, tmp_path / "eval")
    before = (tmp_path / "eval" / "scores.jsonl").read_text()
    again = evaluate(dataset, tmp_path / "eval").manifest.counts
    assert again.requests_sent == 0 and again.cache_hits == again.items == n
    assert (tmp_path / "eval" / "scores.jsonl").read_text() == before


def test_a_new_run_of_the_same_eval_is_served_from_the_cache(tmp_path):
    dataset, n = single_banks(tmp_path)
    evaluate(dataset, tmp_path / "first")
    counts = evaluate(dataset, tmp_path / "second").manifest.counts
    assert counts.requests_sent == 0 and counts.cache_hits == n
    assert sorted(lines(tmp_path / "first" / "scores.jsonl"), key=str) == sorted(
        lines(tmp_path / "second" / "scores.jsonl"), key=str
    )


def test_an_eval_without_the_cache_asks_and_scores_the_same(tmp_path):
    dataset, n = single_banks(tmp_path)
    # an answer that depends on the prompt, so that a request rendered for the wrong item shows
    ScriptedBackend.register("by-length", lambda r: "TF"[len(r.messages[-1].content) % 2])
    spec = "scripted:by-length"
    evaluate(dataset, tmp_path / "cached", spec=spec)
    counts = evaluate(dataset, tmp_path / "uncached", spec=spec, use_cache=False).manifest.counts
    assert counts.requests_sent == n and counts.cache_hits == 0
    for name in ("scores.jsonl", "responses.jsonl"):
        cached, uncached = (
            sorted(
                (
                    {k: v for k, v in r.items() if k != "latency_s"}
                    for r in lines(tmp_path / d / name)
                ),
                key=str,
            )
            for d in ("cached", "uncached")
        )
        assert cached == uncached
        assert len({str(r.get("extracted")) for r in cached}) == 2  # both answers occur


def test_resume_after_a_crash_finishes_without_duplicates(tmp_path):
    dataset, n = single_banks(tmp_path)
    evaluate(dataset, tmp_path / "eval", use_cache=False)
    folder = tmp_path / "eval"
    complete = sorted((folder / "scores.jsonl").read_text().splitlines())
    # what a kill leaves: some scores, a response without its score, half a line
    scores = (folder / "scores.jsonl").read_text().splitlines(keepends=True)
    responses = (folder / "responses.jsonl").read_text().splitlines(keepends=True)
    (folder / "scores.jsonl").write_text("".join(scores[:70]) + scores[70][:25])
    (folder / "responses.jsonl").write_text("".join(responses[:71]) + responses[71][:10])
    counts = evaluate(dataset, folder, use_cache=False).manifest.counts
    assert counts.requests_sent == n - 70 and counts.cache_hits == 70
    after = sorted((folder / "scores.jsonl").read_text().splitlines())
    assert after == complete
    ids = [r["item_id"] for r in lines(folder / "responses.jsonl")]
    assert len(ids) == len(set(ids)) == n


def test_failures_leave_the_run_partial_and_are_asked_again(tmp_path):
    dataset, n = single_banks(tmp_path)
    state = {"down": True}

    def flaky(request: ChatRequest) -> str:
        if state["down"] and "can" in request.messages[-1].content:
            raise RuntimeError("upstream unavailable")
        return "F"

    ScriptedBackend.register("flaky", flaky)
    first = evaluate(dataset, tmp_path / "eval", spec="scripted:flaky")
    assert first.manifest.status == "partial" and first.manifest.counts.failed > 0
    failures = lines(tmp_path / "eval" / "failures.jsonl")
    assert failures and "upstream unavailable" in failures[0]["error"]
    state["down"] = False
    second = evaluate(dataset, tmp_path / "eval", spec="scripted:flaky")
    assert second.manifest.status == "complete" and second.manifest.counts.failed == 0
    assert second.manifest.counts.requests_sent == first.manifest.counts.failed


def test_limit_caps_items_per_task(tmp_path):
    dataset, n = single_banks(tmp_path)
    counts = evaluate(dataset, tmp_path / "eval", limit=5).manifest.counts
    assert counts.items == 10


def test_counts_of_a_resumed_run_take_only_the_items_in_scope(tmp_path):
    dataset, n = single_banks(tmp_path)
    folder = tmp_path / "eval"
    ScriptedBackend.register("always-x", lambda request: "x")  # no T/F: invalid answers
    wide = evaluate(dataset, folder, limit=5, spec="scripted:always-x").manifest
    assert (wide.counts.items, wide.counts.invalid, wide.counts.failed) == (10, 10, 0)
    # fewer items per task: refused, or with reask the earlier run's extra lines set aside
    with pytest.raises(RunError, match=r"sample \(--limit 5 --seed 1234 -> --limit 3"):
        evaluate(dataset, folder, limit=3, spec="scripted:always-x")
    narrow = evaluate(
        dataset, folder, limit=3, spec="scripted:always-x", resume_changed="reask"
    ).manifest
    assert (narrow.counts.items, narrow.counts.requests_sent, narrow.set_aside) == (6, 0, 8)
    assert (narrow.counts.invalid, narrow.counts.failed, narrow.status) == (6, 0, "complete")
    # more again (a sample holding every answer made): the earlier lines and this run's new
    # ones add up, each once
    wider = evaluate(dataset, folder, limit=7, spec="scripted:always-x").manifest
    assert (wider.counts.items, wider.counts.requests_sent) == (14, 4)
    assert (wider.counts.invalid, wider.counts.failed, wider.status) == (14, 0, "complete")
    # a second model in the same folder is counted apart from the first
    both = evaluate(dataset, folder, limit=7, spec="scripted:always-t").manifest
    assert (both.counts.items, both.counts.requests_sent, both.counts.failed) == (14, 14, 0)
    assert both.counts.invalid == 0


def test_report_refreshes_and_compares_runs(tmp_path):
    from gramagents.profiles.compare import compare_runs
    from gramagents.report.runs import refresh_report

    dataset, n = single_banks(tmp_path)
    evaluate(dataset, tmp_path / "one")
    ScriptedBackend.register("always-f", lambda request: "F")
    evaluate(dataset, tmp_path / "two", spec="scripted:always-f")
    (tmp_path / "one" / "report.md").unlink()
    path, manifest, summary = refresh_report(tmp_path / "one")
    assert path.read_text().startswith("# Evaluation report: one")
    assert summary.tallies["scripted:always-t", "SINGLE-T"].score == 1.0
    table = compare_runs([tmp_path / "one", tmp_path / "two", tmp_path / "build"])
    assert "| one | scripted:always-t | 1.000 (0.00 inv.) | 0.000 (0.00 inv.) |" in table
    assert "| two | scripted:always-f | 0.000 (0.00 inv.) | 1.000 (0.00 inv.) |" in table
    # the build folder cannot go beside them: said in one line, not dropped in silence
    [line] = [line for line in table.splitlines() if str(tmp_path / "build") in line]
    assert line.startswith("Left out: ") and "build runs hold no answers" in line
    alone = compare_runs([tmp_path / "one", tmp_path / "build"])
    assert alone.startswith("Left out: ") and "| one | scripted:always-t |" in alone


def test_a_chunk_s_records_count_only_once_committed(tmp_path):
    from gramagents.records import ResponseRecord, ScoreRecord
    from gramagents.runtime.run import Run
    from gramagents.workflow.eval import RecordWriter

    folder = Run.open(tmp_path / "run", "eval")
    writer = RecordWriter(folder)
    chunk = writer.chunk("m")
    for n, (raw, invalid) in enumerate([("T", False), ("?", True)]):
        response = ResponseRecord(model="m", item_id=f"i{n}", task="single-t", raw=raw)
        score = ScoreRecord(
            model="m", item_id=f"i{n}", task="single-t", invalid=invalid, scores={"acc": 1.0}
        )
        chunk.add(response, score)
    chunk.add(ResponseRecord(model="m", item_id="i2", task="single-t", raw=None, error="timeout"))
    # stopped before the commit: nothing written, nothing counted
    assert not writer.scored and writer.summary.summary().tallies == {}
    chunk.commit()
    folder.close()
    assert writer.scored == {("m", "i0"): False, ("m", "i1"): True}
    assert writer.summary.summary().tallies["m", "single-t"].n == 2
    lines = {
        name: (tmp_path / "run" / name).read_text().splitlines()
        for name in ("responses.jsonl", "scores.jsonl", "failures.jsonl")
    }
    assert [json.loads(x)["item_id"] for x in lines["responses.jsonl"]] == ["i0", "i1"]
    assert [json.loads(x)["item_id"] for x in lines["scores.jsonl"]] == ["i0", "i1"]
    assert [json.loads(x)["error"] for x in lines["failures.jsonl"]] == ["timeout"]


def test_the_report_is_written_after_each_model_and_once_at_the_end(tmp_path, monkeypatch):
    import gramagents.report.runs as report_runs

    dataset, _ = single_banks(tmp_path)
    written: list[list[str]] = []
    write = report_runs.write_eval_report

    def counted(folder, manifest, summary):
        written.append(sorted({model for model, _ in summary.tallies}))
        return write(folder, manifest, summary)

    monkeypatch.setattr(report_runs, "write_eval_report", counted)
    evaluate(dataset, tmp_path / "one")
    assert written == [["scripted:always-t"]]  # the run's report only, not the model's first

    written.clear()
    ScriptedBackend.register("always-f", lambda request: "F")
    models = ["scripted:always-t", "scripted:always-f"]
    asyncio.run(run_eval(dataset, EvalOptions(models=models, run_dir=tmp_path / "two")))
    # the first model's report as soon as it is done, then the run's with both
    assert written == [["scripted:always-t"], ["scripted:always-f", "scripted:always-t"]]
    assert "scripted:always-f" in (tmp_path / "two" / "report.md").read_text()


def test_summary_rows_follow_the_manifest_not_the_order_answers_came_in():
    from gramagents.report.summary import SummaryBuilder

    builder = SummaryBuilder()
    arrivals = [("b", "SIM-GRA"), ("a", "SINGLE-T"), ("b", "SINGLE-T"), ("a", "SIM-GRA")]
    for model, task in arrivals:
        builder.add({"model": model, "task": task, "item_id": "x", "scores": {"acc": 1.0}})
    rows = builder.summary().rows(["a", "b"], ["SINGLE-T", "SIM-GRA"])
    assert [(r.model, r.task) for r in rows] == [
        ("a", "SINGLE-T"),
        ("a", "SIM-GRA"),
        ("b", "SINGLE-T"),
        ("b", "SIM-GRA"),
    ]
    unlisted = builder.summary().rows(["a"], ["SIM-GRA"])
    assert [(r.model, r.task) for r in unlisted][:2] == [("a", "SIM-GRA"), ("a", "SINGLE-T")]


def test_an_eval_runs_the_sections_that_write_files_once_for_its_report_and_page(tmp_path):
    from gramagents.report.markdown import FILE_SECTIONS, report_files

    dataset, _ = single_banks(tmp_path)
    calls: list[Path] = []

    def section(folder, manifest, summary):
        calls.append(folder)
        return ["## Counted", "", "ran once"]

    report_files("counted", section)
    try:
        evaluate(dataset, tmp_path / "run")
    finally:
        FILE_SECTIONS.unregister("counted")
    assert calls == [tmp_path / "run"]
    assert "ran once" in (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "ran once" in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
