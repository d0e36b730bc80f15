"""The command line: help, and every bad input is one line, exit code 2, no run folder."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLE_TABLE, ROOT


def gramagents(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "gramagents", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_user_error(result: subprocess.CompletedProcess, cwd: Path, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for word in words:
        assert word in lines[0]
    assert "Traceback" not in result.stderr
    runs = cwd / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())


def test_help_lists_the_commands(tmp_path):
    result = gramagents("--help", cwd=tmp_path)
    assert result.returncode == 0
    for command in ("build", "eval", "report"):
        assert command in result.stdout


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        (
            "missing.csv",
            b"id,category,level,name\n1,c,1,n\n",
            ["missing.csv:1:", "missing column sentence"],
        ),
        (
            "dup.jsonl",
            b'{"id":"1","category":"c","level":1,"name":"n","examples":["x"]}\n'
            b'{"id":"1","category":"c","level":1,"name":"m","examples":["y"]}\n',
            ["dup.jsonl:2:", "field 'id'", "duplicate id"],
        ),
        ("empty.jsonl", b"", ["empty.jsonl:1:", "empty"]),
        (
            "bytes.csv",
            b"id,category,level,name,sentence\n1,c,1,n,caf\xe9\n",
            ["bytes.csv:2:", "not valid UTF-8"],
        ),
    ],
)
def test_bad_sources(tmp_path, name, content, words):
    (tmp_path / name).write_bytes(content)
    result = gramagents("build", "cpg", "--source", name, "--agents", "off", cwd=tmp_path)
    assert_user_error(result, tmp_path, *words)


def test_unknown_recipe_key(tmp_path):
    recipe = (ROOT / "graphs" / "cpg.yaml").read_text(encoding="utf-8")
    (tmp_path / "mine.yaml").write_text(recipe.replace("seed: 1234", "seeed: 1234"))
    result = gramagents("build", "mine.yaml", "--source", str(EXAMPLE_TABLE), cwd=tmp_path)
    assert_user_error(result, tmp_path, "mine.yaml:", "field 'seeed'", "unknown key")


@pytest.fixture
def dataset(tmp_path):
    result = gramagents(
        "build",
        "cpg",
        "--source",
        str(EXAMPLE_TABLE),
        "--agents",
        "off",
        "--run-dir",
        str(tmp_path / "data"),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return tmp_path / "data"


def test_unknown_model_spec(tmp_path, dataset):
    work = tmp_path / "work"
    work.mkdir()
    result = gramagents("eval", str(dataset), "--model", "gpt5:turbo", cwd=work)
    assert_user_error(result, work, "--model 'gpt5:turbo'", "unknown backend 'gpt5'")
    assert "(known: hf, openai, smollm2)" in result.stderr  # no backend made for tests


def test_an_unknown_recipe_is_named_with_the_recipes_there_are(tmp_path):
    result = gramagents("build", "cpgg", "--source", str(EXAMPLE_TABLE), cwd=tmp_path)
    assert_user_error(
        result, tmp_path, "unknown recipe 'cpgg'", "(known: cpg, edu, gec, grammar-book, syntax-qa"
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["agree", "runs/x"], ["Missing option '--human'", "gramagents agree --help"]),
        (["evaluate"], ["No such command 'evaluate'"]),
    ],
)
def test_a_usage_error_is_one_error_line_too(tmp_path, args, words):
    assert_user_error(gramagents(*args, cwd=tmp_path), tmp_path, *words)


def test_unreachable_base_url(tmp_path, dataset):
    work = tmp_path / "work"
    work.mkdir()
    result = gramagents("eval", str(dataset), "--model", "openai:m@http://127.0.0.1:9/v1", cwd=work)
    assert_user_error(result, work, "cannot reach http://127.0.0.1:9/v1 after 3 attempts")


def test_missing_dataset_and_foreign_run_dir(tmp_path, dataset):
    work = tmp_path / "work"
    work.mkdir()
    assert_user_error(gramagents("eval", "nope.jsonl", cwd=work), work, "nope.jsonl", "not found")
    result = gramagents("eval", str(dataset), "--run-dir", str(dataset), cwd=work)
    assert result.returncode == 2 and "holds a build run" in result.stderr


def test_eval_help_lists_every_registered_dataset_format(tmp_path):
    from gramagents.sources.datasets import known_formats

    result = subprocess.run(
        [sys.executable, "-m", "gramagents", "eval", "--help"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert {"cpg-eval", "blimp", "climp", "gramagents"} <= set(known_formats())
    assert f"Dataset format: {', '.join(known_formats())} " in result.stdout


def test_build_help_says_what_limit_counts_for_each_recipe_from_its_reader(tmp_path, monkeypatch):
    from gramagents.cli_runtime import limit_help
    from gramagents.sources import SOURCES, source_reader

    @source_reader("leaf-pile", unit="leaves")
    def read_leaves(path, options):
        raise AssertionError("help reads no source")

    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "leafy.yaml").write_text(
        "recipe: leafy\nsource: leaf-pile\nnodes:\n"
        "  - name: banks\n    builder: cpg\n    tasks: {SINGLE-T: {}}\n",
        encoding="utf-8",
    )
    (tmp_path / "graphs" / "broken.yaml").write_text("recipe: [\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    try:
        said = limit_help()
    finally:
        SOURCES.unregister("leaf-pile")
    assert "leaves (leafy)" in said and "trees (syntax-qa)" in said
    assert "broken" not in said
    units = [SOURCES.get(s).unit for s in ("grammar-table", "treebank", "grammar-book")]
    assert units == ["grammar points", "trees", "pages"]
    assert "grammar points (cpg)" in said and "pages (grammar-book)" in said
