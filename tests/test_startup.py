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
