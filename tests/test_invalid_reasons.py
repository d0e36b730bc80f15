"""Why answers were invalid: counted per task, in report.md and in the viewer."""

from __future__ import annotations

from pathlib import Path

from gramagents.records import EvalManifest, ScoreRecord
from gramagents.report.invalid import reason_columns, reason_lines
from gramagents.report.summary import SummaryBuilder
from gramagents.report.view.eval_page import EvalRun, invalid_table
from gramagents.report.view.items import Presenter
from gramagents.report.view.join import RESPONSE, SCORE


def score(task: str, item: str, reason: str | None, invalid: bool = True) -> ScoreRecord:
    return ScoreRecord(
        model="m",
        item_id=item,
        task=task,
        gold="T",
        invalid=invalid,
        invalid_reason=reason,
        scores={"acc": 0.0 if invalid else 1.0},
    )


def summary_of(records: list[ScoreRecord]):
    builder = SummaryBuilder()
    for record in records:
        builder.add(record.model_dump(mode="json"))
    return builder.summary()


RECORDS = [
    score("SINGLE-T", "1", "echo"),
    score("SINGLE-T", "2", "echo"),
    score("SINGLE-T", "3", "refusal"),
    score("SINGLE-T", "4", None, invalid=False),
    score("BATCH-T", "5", "hedge"),
    score("BATCH-T", "6", None),  # written before reasons were recorded
    score("SIM-GRA", "7", None, invalid=False),
]


def test_reasons_are_counted_per_task():
    summary = summary_of(RECORDS)
    assert dict(summary.tallies["m", "SINGLE-T"].reasons) == {"echo": 2, "refusal": 1}
    assert dict(summary.tallies["m", "BATCH-T"].reasons) == {"hedge": 1, "unrecorded": 1}
    assert not summary.tallies["m", "SIM-GRA"].reasons
    assert reason_columns(summary) == ["echo", "refusal", "hedge", "unrecorded"]


def test_the_report_lists_the_reasons_of_tasks_with_invalid_answers():
    lines = reason_lines(summary_of(RECORDS), ["m"], ["SINGLE-T", "BATCH-T", "SIM-GRA"])
    assert "## Invalid answers by reason" in lines
    table = [line for line in lines if line.startswith("| m |")]
    assert table == [
        "| m | SINGLE-T | 4 | 3 | 2 | 1 | 0 | 0 |",
        "| m | BATCH-T | 2 | 2 | 0 | 0 | 1 | 1 |",
    ]
    assert reason_lines(summary_of(RECORDS[-1:]), ["m"], ["SIM-GRA"]) == []


def test_the_viewer_shows_the_reasons_beside_the_invalid_rates_and_on_each_answer():
    summary = summary_of(RECORDS)
    manifest = EvalManifest(run_id="r", kind="eval", command=[], seed=0, models=["m"])
    run = EvalRun("r", Path("."), manifest, summary)
    html = invalid_table(run)
    assert "Why answers were invalid" in html and "echo 2, refusal 1" in html
    presenter = Presenter(["m"])
    records = {
        RESPONSE: {"raw": "…", "rule": "invalid", "invalid_reason": "echo"},
        SCORE: RECORDS[0].model_dump(mode="json"),
    }
    shown = presenter.answer(records, "SINGLE-T")
    assert shown["invalid"] and shown["invalid_reason"] == "echo"
