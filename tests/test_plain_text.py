"""Text stays text: names and data print as written, and documents escape them.

Before, `openai:zzz` printed as `openai💤` and `openai:m` as `openaiⓂ` (the console's emoji
codes) in progress lines and results; the dataset card wrote a file name with a line break and
the `--license` value raw (a heading and an `<img onerror>` in the card); and a `--run-dir`
name with a line break added a heading to `report.md`.
"""

from __future__ import annotations

import yaml
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.progress import LineProgress, RichProgress
from gramagents.records import BuildManifest
from gramagents.report.build import render_build_report
from gramagents.runtime.rundir import write_atomic
from gramagents.testing.drills import drill_answer, write_drill_dataset
from gramagents.testing.openai_server import FakeChatServer
from gramagents.workflow.export import export_run

from .test_export import odd_build
from .test_run_folder import evaluate, two_template_dataset

NAMES = ["openai:zzz", "openai:m", "openai:[bold]x[/bold]"]


def headings(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def html_of(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    found = [t for t in tokens if t.type == "html_block"]
    found += [c for t in tokens for c in (t.children or []) if c.type == "html_inline"]
    return [t.content for t in found]


def test_model_names_print_as_written_in_progress_lines_and_results(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAMAGENTS_PROGRESS_S", "0")
    monkeypatch.chdir(tmp_path)
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 3)
    with FakeChatServer(responder=drill_answer) as server:
        specs = [f"{name}@{server.base_url}" for name in NAMES]
        args = ["eval", str(dataset), "--run-dir", str(tmp_path / "run")]
        result = CliRunner().invoke(app, [*args, *(a for s in specs for a in ("--model", s))])
    assert result.exit_code == 0, result.output
    for name in NAMES:
        assert f"eval {name}: 3/3 (100 %)" in result.stderr
    shown = CliRunner().invoke(app, ["report", str(tmp_path / "run")])
    assert shown.exit_code == 0 and "openai:zzz" in shown.output and "openai:m" in shown.output
    for output in (result.output, shown.output):
        assert "💤" not in output and "Ⓜ" not in output


def test_a_progress_bar_shows_its_label_as_written():
    from rich.console import Console

    console = Console(record=True, width=200, force_terminal=True)
    bar = RichProgress(console)
    bar.start("eval openai:zzz [red]judged by openai:m", 2)
    bar.advance(1, **{"ok :zzz:": 1})
    bar.note("note openai:m: [b]done[/b]")
    bar.stop()
    text = console.export_text()
    assert "eval openai:zzz [red]judged by openai:m" in text
    assert "ok :zzz: 1" in text and "note openai:m: [b]done[/b]" in text
    lines = Console(record=True, width=200)
    plain = LineProgress(lines, interval=0)
    plain.start("eval openai:zzz:", 1)
    plain.advance(1)
    plain.stop()
    assert lines.export_text().startswith("eval openai:zzz:: 1/1 (100 %)")


def test_the_dataset_card_escapes_names_licence_and_file_names(tmp_path):
    build = odd_build(tmp_path / "build")
    manifest = BuildManifest.model_validate_json((build / "manifest.json").read_text())
    manifest.run_id = "odd\n# A heading from the run id"
    manifest.recipe = "hand`made\n# A heading from the recipe"
    manifest.source = {"path": str(tmp_path / "points\n# A heading from a file name.jsonl")}
    manifest.stages = {"read\n# stage": {"kept": 4}}
    write_atomic(build / "manifest.json", manifest.model_dump_json())
    licence = "MIT\n# A heading from the licence\n<img src=x onerror=alert(1)>`"
    export_run(build, "parquet", tmp_path / "out", license=licence)
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    _, front, body = card.split("---\n", 2)
    assert yaml.safe_load(front)["license"] == licence  # the front matter holds it whole
    titled = [h for h in headings(body) if "A heading" in h]
    assert len(titled) == 1 and titled[0].startswith("hand")  # the title, on one line
    assert html_of(body) == []
    assert "points # A heading from a file name.jsonl" in body


def test_a_run_folder_name_with_a_line_break_adds_no_heading_to_report_md(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run\n# Injected <img src=x onerror=alert(1)>"
    evaluate(dataset, run)
    report = (run / "report.md").read_text(encoding="utf-8")
    assert headings(report)[0].startswith("Evaluation report: run # Injected ")
    assert not any("Injected" in h for h in headings(report)[1:]) and html_of(report) == []
    manifest = BuildManifest(run_id="b\n# Injected", command=[], seed=1)
    built = render_build_report(manifest, in_tmp)
    assert headings(built)[0] == "Build report: b # Injected" and built.count("Injected") == 1
