"""What an eval loads before its first request: task specs without bank builders, package
versions without parsing every METADATA file."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import metadata

from gramagents.tasks.registry import get_builder, known_builders
from gramagents.versions import PACKAGES, package_versions


def test_versions_match_importlib_metadata():
    versions = package_versions()
    for name in PACKAGES:
        try:
            expected = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert name not in versions
            continue
        assert versions[name] == expected, name
    assert versions["gramagents"] == metadata.version("gramagents")


def test_builders_are_known_before_they_are_imported_and_resolve_when_asked():
    assert {"cpg", "gec"} <= set(known_builders())
    cpg = get_builder("cpg")
    gec = get_builder("gec")
    assert cpg is not None and cpg.name == "cpg" and "SIM-GRA" in cpg.task_params
    assert gec is not None and gec.artifacts is not None and "GEC-PAIR" in gec.task_params
    assert get_builder("nope") is None


def test_task_specs_and_dataset_reading_import_no_bank_builder(tmp_path):
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text(
        json.dumps({"id": "q1", "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {}}})
        + "\n"
    )
    code = (
        "import sys\n"
        "HEAVY = ('pyarrow', 'datasets', 'openai')\n"
        "from gramagents.sources.datasets import read_dataset\n"
        "from gramagents.tasks.registry import get_task\n"
        f"read_dataset({str(dataset)!r})\n"
        "assert get_task('SINGLE-T') is not None and get_task('GEC-BASELINE') is not None\n"
        "print(sorted(m for m in sys.modules if m.startswith('gramagents') or m in HEAVY))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(ast.literal_eval(out))
    assert "gramagents.recipes.cpg.tasks" in loaded and "gramagents.recipes.gec.tasks" in loaded
    for module in (
        "gramagents.recipes.cpg.banks",
        "gramagents.recipes.cpg.params",
        "gramagents.recipes.gec.banks",
        "gramagents.recipes.cpg.released",
        "gramagents.recipes.pairs.reader",
        "gramagents.recipes.cpg.rewriter",
        "gramagents.recipes.gec.agents",
        "gramagents.sources.exported",  # reads exported folders only
        "pyarrow",
        "datasets",
        "openai",
    ):
        assert module not in loaded, module


def _cli_imports(args: list[str], cwd) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run the CLI in a fresh interpreter; its result and the modules it imported."""
    code = (
        "import sys\n"
        f"sys.argv = ['gramagents', *{args!r}]\n"
        "from gramagents.cli import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('MODULES', sorted(sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    lines = done.stderr.splitlines()
    modules = ast.literal_eval(lines[-1].removeprefix("MODULES "))
    done.stderr = "\n".join(lines[:-1])
    return done, set(modules)


HEAVY = ("torch", "transformers", "langgraph", "langchain_core", "spacy", "openai", "altair")


def test_an_unknown_recipe_is_one_line_without_importing_recipes_or_heavy_libraries(tmp_path):
    for args in (["build", "nope"], ["build", "nope", "--source", "x"]):
        done, modules = _cli_imports(args, tmp_path)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]
        assert done.stderr.startswith("error: unknown recipe 'nope' (known: cpg, "), done.stderr
        assert not [m for m in modules if m.startswith("gramagents.recipes")], args
        assert not [m for m in HEAVY if m in modules], args
        assert "gramagents.workflow.build" not in modules


def test_a_known_recipe_without_source_is_one_line(tmp_path):
    done, modules = _cli_imports(["build", "cpg"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: build: --source is required (the file or folder it reads)"
    assert "gramagents.workflow.build" not in modules


def test_recipe_subcommands_still_come_from_the_registry(tmp_path):
    done, modules = _cli_imports(["--help"], tmp_path)
    assert done.returncode == 0
    assert " m2 " in done.stdout  # announced by the GEC recipe, listed beside the built-ins
    assert "gramagents.recipes.gec.cli" in modules
    done, _ = _cli_imports(["m2", "--help"], tmp_path)
    assert done.returncode == 0 and "errant_compare" in done.stdout
