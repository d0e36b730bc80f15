"""Numbers that say what they are: averages within one metric, breakdowns by each task's own
metric, headers that state the real batch sizes, and the count of identical prompts asked once.

The scores are written by hand (a task's items, a model's answers), so every cell is known.
"""

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gramagents.recipes.cpg
import gramagents.recipes.edu  # noqa: F401 - the tasks the records name
from gramagents.cli import app
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import EvalManifest, Item, PromptParts
from gramagents.report.markdown import render_report
from gramagents.report.summary import SummaryBuilder
from gramagents.report.view.eval_page import EvalRun, breakdown_tables, layout_table, score_table
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.workflow.eval import EvalOptions, run_eval

MODEL = "m"


def _record(task, item, scores, meta, **rest):
    return {"model": MODEL, "task": task, "item_id": item, "scores": scores, "meta": meta, **rest}


def _essays():
    """Two essays at level `application`, two at `memory`: predicted 50 against 80 and 60."""
    return [
        _record(
            "EDU-ESSAY",
            f"s{k}",
            {"abs_error": abs(50 - gold)},
            {"task_id": "3-5", "level": level, "subject": "语文"},
            gold=gold,
            extracted=50,
        )
        for k, (gold, level) in enumerate(
            [(80, "application"), (60, "application"), (90, "memory"), (50, "memory")]
        )
    ]


def _choices():
    return [
        _record(
            "EDU-MC",
            f"c{k}",
            {"acc": float(k % 2)},
            {"task_id": "1-1", "level": level, "subject": "语文"},
        )
        for k, level in enumerate(["application", "application", "memory", "memory"])
    ]


def _summary(records):
    builder = SummaryBuilder()
    for record in records:
        builder.add(record)
    return builder.summary()


def _manifest(tasks, random=None):
    return EvalManifest(
        run_id="r",
        command=["eval"],
        seed=0,
        models=[MODEL],
        tasks={t: 4 for t in tasks},
        random_baselines=random or {},
    )


def _table(report: str, title: str) -> list[list[str]]:
    """The rows of the first markdown table after the heading `title`, cells stripped."""
    lines = report.splitlines()
    start = lines.index(title)
    rows = []
    for line in lines[start + 1 :]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows


def test_an_average_never_mixes_accuracy_and_rmse():
    tasks = ["EDU-MC", "EDU-ESSAY"]
    summary = _summary(_choices() + _essays())
    report = render_report(_manifest(tasks, {"EDU-MC": 0.25}), summary, tasks, {"EDU-MC": 0.25})
    header, random, model = _table(report, "## Scores by task")
    assert header == [
        "model",
        "EDU-MC acc",
        "EDU-MC invalid",
        "EDU-ESSAY rmse",
        "EDU-ESSAY invalid",
        "Average acc",
        "Average rmse",
    ]
    rmse = ((30**2 + 10**2 + 40**2 + 0**2) / 4) ** 0.5
    assert model == [MODEL, "0.500", "0.000", f"{rmse:.3f}", "0.000", "0.500", f"{rmse:.3f}"]
    assert random[-2:] == ["0.250", "—"]  # no RANDOM for the RMSE, none mixed into accuracy
    assert "An Average is taken over the tasks of one metric only (this run has 2" in report


def test_many_tasks_turned_into_rows_get_an_average_row_per_metric():
    tasks = ["EDU-MC", "EDU-ESSAY", "EDU-MC-3SHOT", "EDU-DIALOGUE"]
    records = _choices() + _essays()
    records += [{**r, "task": "EDU-MC-3SHOT", "scores": {"acc": 1.0}} for r in _choices()]
    records += [{**r, "task": "EDU-DIALOGUE", "scores": {"acc": 0.0}} for r in _choices()]
    summary = _summary(records)
    report = render_report(_manifest(tasks), summary, tasks, {})
    rows = _table(report, "## Scores by task")
    averages = [row for row in rows if row[0] == "Average"]
    assert averages == [
        ["Average", "acc", "0.500", "—"],  # (0.5 + 1 + 0) / 3, without the RMSE
        ["Average", "rmse", rows[2][2], "—"],
    ]


def test_breakdowns_score_an_aggregated_task_by_its_own_metric():
    tasks = ["EDU-MC", "EDU-ESSAY"]
    summary = _summary(_choices() + _essays())
    report = render_report(_manifest(tasks), summary, tasks, {})
    rows = _table(report, "## Scores by level")
    assert rows[0] == ["model", "level", "EDU-MC acc", "EDU-ESSAY rmse"]
    by_level = {row[1]: row[2:] for row in rows[1:]}
    # the RMSE of each level's own essays, not the mean of an `rmse` the items do not have
    assert by_level["application"] == ["0.500", f"{((30**2 + 10**2) / 2) ** 0.5:.3f}"]
    assert by_level["memory"] == ["0.500", f"{((40**2 + 0**2) / 2) ** 0.5:.3f}"]
    assert summary.tallies[MODEL, "EDU-ESSAY"].score == pytest.approx(
        summary.aggregates[MODEL, "EDU-ESSAY"].scores["rmse"]
    )


def test_the_viewer_s_tables_name_their_metrics_and_average_within_one(tmp_path):
    tasks = ["EDU-MC", "EDU-ESSAY"]
    run = EvalRun("run0", tmp_path, _manifest(tasks), _summary(_choices() + _essays()))
    scores = score_table(run)
    assert "<th>Average (acc)</th>" in scores and "<th>Average (rmse)</th>" in scores
    assert "<th>Average</th>" not in scores
    levels = breakdown_tables(run)
    assert "<th>EDU-ESSAY (rmse)</th>" in levels
    assert f"{((30**2 + 10**2) / 2) ** 0.5:.3f}" in levels


def _batches():
    return [
        _record("BATCH-T", f"b{n}", {"acc": 1.0}, {"n": n, "category": "c"}) for n in (4, 9, 4)
    ] + [_record("CON-INS-F10", "f", {"acc": 1.0}, {"n": 10, "category": "c"})]


def test_the_cpg_table_states_the_batch_sizes_the_run_has(tmp_path):
    from gramagents.recipes.cpg.report import CPG_TABLE_3

    tasks = ["BATCH-T", "CON-INS-F10"]
    summary = _summary(_batches())
    assert summary.sizes == {"BATCH-T": {4, 9}, "CON-INS-F10": {10}}
    report = render_report(_manifest(tasks), summary, tasks, {})
    header = _table(report, "## CPG-EVAL Table 3 layout")[0]
    assert header[1:9] == [
        "SINGLE T",
        "SINGLE F",
        "BATCH T×4/9",
        "BATCH F×n",  # not in this run: no size to state
        "SIM-GRA",
        "CAT-GRA",
        "CON-INS F×10",
        "CON-INS T×5&F×5",
    ]
    html = layout_table(CPG_TABLE_3, EvalRun("run0", tmp_path, _manifest(tasks), summary))
    assert "<th>BATCH T×4/9</th>" in html and "×9</th>" not in html


def _same_prompt_items(path: Path) -> Path:
    """Three SINGLE-T items, two of which render the very same prompt."""
    items = [
        Item(
            id=f"SINGLE-T/{k}",
            task="SINGLE-T",
            prompt=PromptParts(
                template="cpg/single.zh.md", vars={"sentence": sentence, "point": "能愿动词：会"}
            ),
            answer="T",
            meta={"point": "1001"},
        )
        for k, sentence in enumerate(["我会游泳。", "我会游泳。", "他会说法语。"])
    ]
    write_jsonl_atomic(path, [i.model_dump(mode="json") for i in items])
    return path


def test_identical_prompts_asked_once_are_counted_and_said(tmp_path, monkeypatch):
    ScriptedBackend.register("always-t", lambda request: "T")
    dataset = _same_prompt_items(tmp_path / "dataset.jsonl")
    result = asyncio.run(
        run_eval(dataset, EvalOptions(models=["scripted:always-t"], run_dir=tmp_path / "e"))
    )
    counts = result.manifest.counts
    assert (counts.items, counts.requests_sent, counts.shared, counts.cache_hits) == (3, 2, 1, 0)
    manifest = json.loads((tmp_path / "e" / "manifest.json").read_text())
    assert manifest["counts"]["shared"] == 1
    said = "3 answers, 2 requests sent (1 more was identical to one of them and asked once)"
    assert said in (tmp_path / "e" / "report.md").read_text(encoding="utf-8")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAMAGENTS_CACHE", str(tmp_path / "another-cache.sqlite"))
    out = CliRunner().invoke(
        app, ["eval", str(dataset), "--model", "scripted:always-t", "--run-dir", "again"]
    )
    assert out.exit_code == 0, out.output
    assert f"complete: {said}, 0 cache hits" in " ".join(out.output.split())


def test_fresh_items_go_to_the_model_in_chunks_of_the_backends_size(tmp_path, monkeypatch):
    """The plan cuts the items the cache lacks into chunks of the backend's `chunk_size`
    (1,000 for a scripted model), not one chunk per item: a chunk is one call to the model
    and one pass of the graph's bookkeeping."""
    from gramagents.models.model import Model

    sizes: list[int] = []
    generate = Model.generate

    async def counted(self, requests, keys=None):
        sizes.append(len(requests))
        return await generate(self, requests, keys)

    monkeypatch.setattr(Model, "generate", counted)
    ScriptedBackend.register("always-t", lambda request: "T")
    dataset = _same_prompt_items(tmp_path / "dataset.jsonl")
    asyncio.run(
        run_eval(dataset, EvalOptions(models=["scripted:always-t"], run_dir=tmp_path / "e"))
    )
    assert sizes == [3]
