"""Every YAML gramagents reads goes through one safe loader whose aliases are bounded.

An alias bomb (aliases of aliases: a few hundred bytes that expand to billions of values) used
to hang `build --source`, `profile --suite` and `rubric check`: nothing refused it, and the
checks walked every expanded value. Each reader runs in a subprocess with a deadline, so that a
reader that hangs fails its test instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import gramagents
from gramagents.errors import InputError
from gramagents.profiles.suite import load_suite
from gramagents.sources._text import load_yaml_with_lines
from gramagents.testing.drills import cli_env

from .conftest import ROOT


def alias_bomb(levels: int = 8) -> str:
    """Nine strings, then `levels` lists of nine aliases of the list before: 9**(levels+1)."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_the_bomb_is_small():
    assert len(alias_bomb().encode()) < 600


def run_command(*args: str, cwd: Path, timeout: float = 15) -> tuple[float, subprocess.Popen]:
    """Run the command line; its seconds and its finished process (killed at `timeout`)."""
    began = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "gramagents", *args],
        cwd=cwd,
        env=cli_env(cwd / "cache.sqlite"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return time.monotonic() - began, process


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("bomb.yaml", ["profile", "--suite", "{file}"]),
        ("bomb.yaml", ["build", "cpg", "--source", "{file}", "--agents", "off"]),
        ("bomb.yml", ["build", "gec", "--source", "{file}", "--agents", "off"]),
        ("bomb.md", ["rubric", "check", "{file}"]),
    ],
)
def test_an_alias_bomb_stops_the_command_at_once_with_one_line(tmp_path, name, args):
    file = tmp_path / name
    bomb = alias_bomb()
    file.write_text(f"---\n{bomb}---\nbody\n" if name.endswith(".md") else bomb)
    seconds, process = run_command(*[a.format(file=file) for a in args], cwd=tmp_path)
    assert process.returncode == 2, f"still running or failed otherwise after {seconds:.0f} s"
    lines = process.stderr.read().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {file}: YAML aliases expand to")
    assert seconds < 15


READERS = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    from gramagents.errors import GramagentsError
    from gramagents.judging.rubric import load_rubric
    from gramagents.profiles.suite import load_suite
    from gramagents.recipes.cpg.table import read_grammar_table
    from gramagents.recipes.gec.items import read_grammar_items
    from gramagents.recipes.syntax.points import load_points_file
    from gramagents.templates import split_front_matter
    from gramagents.workflow.recipe import load_recipe

    yaml, markdown = Path(sys.argv[1]), Path(sys.argv[2])
    readers = {
        "suite": lambda: load_suite(str(yaml)),
        "recipe": lambda: load_recipe(str(yaml)),
        "grammar table": lambda: read_grammar_table(yaml),
        "grammar items": lambda: read_grammar_items(yaml),
        "syntax patterns": lambda: load_points_file(yaml),
        "rubric": lambda: load_rubric(markdown),
        "prompt front matter": lambda: split_front_matter(markdown.read_text(), markdown),
    }
    for name, read in readers.items():
        try:
            read()
            print(name, "read")
        except GramagentsError as exc:
            print(name, "refused:", exc, flush=True)
    """
)


def test_every_yaml_reader_refuses_an_alias_bomb_naming_the_file(tmp_path):
    yaml, markdown = tmp_path / "bomb.yaml", tmp_path / "bomb.md"
    yaml.write_text(alias_bomb())
    markdown.write_text(f"---\n{alias_bomb()}---\nbody\n")
    found = subprocess.run(
        [sys.executable, "-c", READERS, str(yaml), str(markdown)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = found.stdout.splitlines()
    assert len(lines) == 7, found.stdout + found.stderr
    for line in lines:
        name, _, said = line.partition(" refused: ")
        file = markdown if name in ("rubric", "prompt front matter") else yaml
        assert said.startswith(f"{file}: YAML aliases expand to more than"), line


def test_no_module_reads_yaml_but_through_the_one_loader():
    calls = ("yaml.load(", "yaml.safe_load(", "yaml.full_load(", "yaml.unsafe_load(", "load_all(")
    package = Path(gramagents.__file__).parent
    uses = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(call in line for call in calls)
    ]
    assert uses == []


def test_a_few_aliases_and_merge_keys_still_read(tmp_path):
    from gramagents.sources._text import MAX_ALIAS_VALUES

    file = tmp_path / "aliased.yaml"
    text = (
        "defaults: &defaults {limit: 5, point_key: point}\n"
        "one: {<<: *defaults, dataset: {path: a.jsonl}}\n"
        "two: {<<: *defaults, limit: 2}\n"
    )
    data, _ = load_yaml_with_lines(file, text)
    assert data["one"] == {"limit": 5, "point_key": "point", "dataset": {"path": "a.jsonl"}}
    assert data["two"] == {"limit": 2, "point_key": "point"}
    repeats = MAX_ALIAS_VALUES // 1001  # each alias adds the list and its 1000 strings
    wide = (
        "base: &b ["
        + ", ".join(["x"] * 1000)
        + "]\n"
        + "".join(f"k{i}: *b\n" for i in range(repeats))
    )
    data, _ = load_yaml_with_lines(file, wide)  # just under the bound: read
    assert len(data) == repeats + 1 and data["k0"] == data["base"]
    with pytest.raises(InputError, match="YAML aliases expand to more than"):
        load_yaml_with_lines(file, wide + "".join(f"more{i}: *b\n" for i in range(3)))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "suite: aliased\nentries:\n  one: &e {dataset: {path: a.jsonl}, limit: 3}\n"
        "  two: *e\ncompetences:\n  recognition: [SINGLE-T]\n"
    )
    loaded, _ = load_suite(str(suite))
    assert loaded.entries["one"] == loaded.entries["two"]


def test_an_alias_inside_its_own_value_is_one_line(tmp_path):
    file = tmp_path / "loop.yaml"
    with pytest.raises(InputError, match="refers to the value that holds it") as caught:
        load_yaml_with_lines(file, "points:\n  - &a [1, *a]\n")
    assert str(caught.value).startswith(f"{file}:2: ")
