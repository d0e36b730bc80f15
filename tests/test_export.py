"""`gramagents export` and reading the export back: the round trip keeps every item and score."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import InputError, RunError
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import BuildManifest, ChatRequest, EvalManifest, Item, PromptParts
from gramagents.runtime.rundir import write_atomic, write_jsonl_atomic
from gramagents.sources.datasets import read_dataset
from gramagents.workflow import export as export_module
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval
from gramagents.workflow.export import export_run

from .conftest import EXAMPLE_TABLE


def by_prompt(request: ChatRequest) -> str:
    """An answer that depends on the whole prompt, so a changed item changes its score."""
    digest = hashlib.sha256(request.messages[-1].content.encode()).digest()
    return ["T", "F", "A", "B", "C", "D", "T F T F T F T F T F"][digest[0] % 7]


@pytest.fixture(scope="module")
def cpg_build(tmp_path_factory) -> Path:
    """The example CPG banks (572 items, every bank), built once for this module."""
    folder = tmp_path_factory.mktemp("cpg") / "build"
    options = BuildOptions(source=EXAMPLE_TABLE, agents=False, run_dir=folder, use_cache=False)
    asyncio.run(run_build("cpg", options))
    return folder


def odd_build(folder: Path) -> Path:
    """A build run folder whose items come in the shapes real ones do, tidy or not."""
    items = [
        Item(id="a/1", task="SINGLE-T", prompt=PromptParts(template="raw.md"), answer="T"),
        Item(
            id="b/2",
            task="BATCH-F",
            prompt=PromptParts(template="cpg/batch.zh.md", vars={"sentences": ["一", "二"]}),
            answer=["F", "T", None],
            meta={"level": 3, "weight": 0.25, "ok": True, "nested": {"zh": "语法", "list": []}},
        ),
        Item(
            id="c 3 ü",
            task="GEC-OPEN",
            prompt=PromptParts(template="gec/open.md", vars={"text": 'a "quoted"\nline'}),
            answer={"edits": [[0, 1, "x"]], "note": None},
            meta={"language": "en", "empty": "", "emoji": "✓"},
        ),
        Item(id="d/4", task="SIM-GRA", prompt=PromptParts(template="raw.md"), answer=None),
    ]
    folder.mkdir(parents=True)
    write_jsonl_atomic(folder / "dataset.jsonl", items)
    manifest = BuildManifest(
        run_id="odd",
        kind="build",
        command=["gramagents", "build"],
        recipe="hand-made",
        seed=1,
        status="complete",
        tasks={"SINGLE-T": 1, "BATCH-F": 1, "GEC-OPEN": 1, "SIM-GRA": 1},
        hashes={"recipe": "0" * 64},
    )
    write_atomic(folder / "manifest.json", manifest.model_dump_json(indent=2))
    return folder


def dumps(path: Path, fmt: str = "gramagents") -> list[dict]:
    return [item.model_dump(mode="json") for item in read_dataset(path, fmt).items]


@pytest.mark.parametrize("to", ["parquet", "hf"])
def test_odd_items_come_back_the_same(tmp_path, to):
    build = odd_build(tmp_path / "build")
    result = export_run(build, to, tmp_path / "out")
    assert result.items == 4
    assert dumps(tmp_path / "out") == dumps(build)
    assert dumps(tmp_path / "out", to) == dumps(build)


@pytest.mark.slow
def test_the_card_states_recipe_counts_hashes_and_licence(cpg_build, tmp_path):
    out = tmp_path / "shared"
    result = export_run(cpg_build, "parquet", out, license="CC-BY-4.0")
    card = (out / "README.md").read_text(encoding="utf-8")
    _, front, body = card.split("---\n", 2)
    front = yaml.safe_load(front)
    assert front["license"] == "CC-BY-4.0" and front["language"] == ["en", "zh"]
    assert front["configs"][0]["data_files"][0]["path"] == "data/test-*.parquet"
    manifest = json.loads((cpg_build / "manifest.json").read_text(encoding="utf-8"))
    assert "`cpg` recipe" in body
    for task, n in manifest["tasks"].items():
        assert f"| {task} | {n} |" in body
    assert f"| total | {sum(manifest['tasks'].values())} |" in body
    [(name, sha)] = result.files.items()
    assert name == "data/test-00000-of-00001.parquet"
    assert sha == hashlib.sha256((out / name).read_bytes()).hexdigest() and sha in body
    assert manifest["hashes"]["recipe"] in body and manifest["hashes"]["dataset"] in body
    record = json.loads((out / "gramagents.json").read_text(encoding="utf-8"))
    assert record["build"]["run_id"] == "build" and record["export"]["files"] == result.files


def test_without_a_licence_the_card_says_unknown_and_how_to_give_one(tmp_path):
    export_run(odd_build(tmp_path / "build"), "hf", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "license: unknown" in card and "--license" in card


@pytest.mark.slow
def test_round_trip_gives_the_same_items_and_scores(cpg_build, tmp_path):
    ScriptedBackend.register("by-prompt", by_prompt)
    runs = {}
    for to in ("original", "parquet", "hf"):
        source = cpg_build
        if to != "original":
            source = tmp_path / f"export-{to}"
            export_run(cpg_build, to, source)
        assert dumps(source) == dumps(cpg_build)
        options = EvalOptions(
            models=["scripted:by-prompt"], run_dir=tmp_path / f"eval-{to}", use_cache=False
        )
        result = asyncio.run(run_eval(source, options))
        assert result.manifest.status == "complete" and result.manifest.recipe == "cpg"
        scores = [
            {k: v for k, v in json.loads(line).items() if k not in ("latency_s", "time")}
            for line in (tmp_path / f"eval-{to}" / "scores.jsonl").read_text().splitlines()
        ]
        summary = json.loads((tmp_path / f"eval-{to}" / "summary.json").read_text())
        runs[to] = (sorted(scores, key=lambda s: s["item_id"]), summary)
    assert 0 < sum(row["score"] * row["n"] for row in runs["original"][1]) < 572  # not constant
    assert runs["parquet"] == runs["original"] and runs["hf"] == runs["original"]


def test_export_refuses_an_existing_folder_and_a_run_that_is_not_a_build(tmp_path):
    build = odd_build(tmp_path / "build")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="already exists"):
        export_run(build, "parquet", taken)
    assert [p.name for p in taken.iterdir()] == ["keep.txt"]
    manifest = EvalManifest(run_id="odd", command=[], seed=1)
    (build / "manifest.json").write_text(manifest.model_dump_json())
    with pytest.raises(RunError, match="build: an eval run, not a build run"):
        export_run(build, "parquet", tmp_path / "new")


def test_a_failed_export_leaves_nothing(tmp_path, monkeypatch):
    build = odd_build(tmp_path / "build")

    def broken(columns, folder):
        (folder / "data").mkdir()
        (folder / "data" / "half.parquet").write_bytes(b"PAR1")
        raise OSError("disk full")

    monkeypatch.setattr(export_module, "_write_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        export_run(build, "parquet", tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build"]


def test_a_parquet_file_without_our_columns_is_one_clear_error(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "data").mkdir()
    pq.write_table(pa.table({"id": ["x"], "question": ["?"]}), tmp_path / "data" / "t.parquet")
    with pytest.raises(InputError, match="no column 'task'"):
        read_dataset(tmp_path)


def test_a_bad_json_cell_names_its_row_and_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    build = odd_build(tmp_path / "build")
    export_run(build, "parquet", tmp_path / "out")
    path = tmp_path / "out" / "data" / "test-00000-of-00001.parquet"
    table = pq.read_table(path).to_pylist()
    table[2]["meta"] = "{not json"
    pq.write_table(pa.Table.from_pylist(table), path)
    with pytest.raises(InputError, match=r"field 'meta': row 3: not JSON"):
        read_dataset(tmp_path / "out", "parquet")


def test_the_command_line_exports_and_eval_reads_the_folder(tmp_path, monkeypatch):
    build = odd_build(tmp_path / "build")
    runner = CliRunner()
    out = tmp_path / "out"
    done = runner.invoke(app, ["export", str(build), str(out), "--to", "hf", "--license", "MIT"])
    assert done.exit_code == 0, done.output
    assert "exported 4 items" in done.output and "licence MIT" in done.output
    again = runner.invoke(app, ["export", str(build), str(out), "--to", "parquet"])
    assert again.exit_code == 2 and "already exists" in again.output
    assert dumps(out) == dumps(build)


def test_the_cards_title_names_the_recipe_once(tmp_path):
    build = odd_build(tmp_path / "gec")
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(recipe="gec", run_id="gec")  # a build folder named after its recipe
    (build / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    export_run(build, "hf", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    _, front, body = card.split("---\n", 2)
    assert yaml.safe_load(front)["pretty_name"] == "gec benchmark"
    assert body.lstrip().splitlines()[0] == "# gec benchmark"
