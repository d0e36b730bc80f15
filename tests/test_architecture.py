"""The shape of the code: an engine and recipes on it, in small modules and functions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "gramagents"
ENGINE = [p for p in PACKAGE.rglob("*.py") if "recipes" not in p.relative_to(PACKAGE).parts]
RECIPES = sorted((PACKAGE / "recipes").glob("*/**/*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _imports(path: Path) -> list[str]:
    """Every module `path` imports, as an absolute dotted name."""
    module = ".".join(("gramagents", *path.relative_to(PACKAGE).with_suffix("").parts))
    return _imports_of(path.read_text(encoding="utf-8"), module)


def _source_of(node: ast.ImportFrom, module: str) -> str:
    """The absolute name of what `from ... import` in `module` imports from."""
    if not node.level:
        return node.module or ""
    base = module.split(".")[: -node.level]  # `from .x` in a.b.c is a.b.x (`__init__` counts)
    return ".".join([*base, node.module] if node.module else base)


def _statements(source: str, module: str) -> list[tuple[str, list[str]]]:
    """Each import in `source` (the text of `module`): its absolute source, the names taken."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((_source_of(node, module), [a.name for a in node.names]))
    return found


def _imports_of(source: str, module: str) -> list[str]:
    """Every module `source` (the text of `module`) imports, as an absolute dotted name."""
    return [
        name
        for target, names in _statements(source, module)
        for name in (target, *(f"{target}.{n}" for n in names))
    ]


def test_the_engine_imports_no_recipe():
    offenders = {
        str(path.relative_to(PACKAGE)): name
        for path in ENGINE
        for name in _imports(path)
        if name == "gramagents.recipes" or name.startswith("gramagents.recipes.")
    }
    assert offenders == {}


def test_every_paper_has_its_package_and_the_old_build_graph_is_gone():
    for name in ("cpg", "gec", "edu", "pairs"):
        assert (PACKAGE / "recipes" / name / "__init__.py").is_file(), name
    assert not (PACKAGE / "workflow" / "edu_build.py").exists()


def test_the_import_check_sees_every_form_of_import():
    module = "gramagents.workflow.example"
    for source in (
        "from ..recipes.cpg import tasks",
        "from ..recipes import cpg",
        "from gramagents.recipes.gec.m2 import read_m2_file",
        "import gramagents.recipes.edu",
        "def f():\n    from ..recipes.pairs import reader\n",
    ):
        assert any(n.startswith("gramagents.recipes") for n in _imports_of(source, module)), source
    assert not any(
        n.startswith("gramagents.recipes")
        for n in _imports_of("from ..sources import _text", module)
    )


def _gramagents_imports(source: str, module: str) -> list[str]:
    """The gramagents modules `source` (the text of `module`) reaches by importing.

    `from gramagents import x` reaches `gramagents.x`; any other `from M import x` reaches `M`
    (`x` may be a name in it, not a module); `import M` reaches `M`.
    """
    found = []
    for target, names in _statements(source, module):
        found += [f"{target}.{n}" for n in names] if target == "gramagents" and names else [target]
    return [n for n in found if n == "gramagents" or n.startswith("gramagents.")]


def _outside_the_api(source: str, module: str) -> list[str]:
    """What a recipe module imports from gramagents besides `gramagents.api` and its own package."""
    own = ".".join(module.split(".")[:3])  # gramagents.recipes.<name>
    return [
        name
        for name in _gramagents_imports(source, module)
        if name != "gramagents.api" and name != own and not name.startswith(own + ".")
    ]


def test_recipes_import_the_engine_only_through_its_api():
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in RECIPES
        if (
            found := _outside_the_api(
                path.read_text(encoding="utf-8"),
                ".".join(("gramagents", *path.relative_to(PACKAGE).with_suffix("").parts)),
            )
        )
    }
    assert offenders == {}


def test_the_api_check_sees_every_form_of_import():
    module = "gramagents.recipes.toy.reader"
    for source in (
        "from ...records import Item",
        "from ... import resources",
        "from ...sources import _text",
        "from ..cpg import tasks",
        "from ..cpg.banks import build",
        "from gramagents.cli import fail",
        "import gramagents.errors",
        "import gramagents",
        "def f():\n    from ...workflow.build import finish_build\n",
    ):
        assert _outside_the_api(source, module) != [], source
    for source in (
        "from ...api import Item, task",
        "from ... import api",
        "from gramagents.api import Item",
        "from gramagents import api",
        "import gramagents.api",
        "from . import tasks",
        "from .banks import build",
        "from gramagents.recipes.toy.banks import build",
        "def f():\n    from ...api import finish_build\n",
    ):
        assert _outside_the_api(source, module) == [], source
    init = "gramagents.recipes.toy.__init__"
    assert _outside_the_api("from . import tasks\nfrom ...api import task", init) == []
    assert _outside_the_api("from ...records import Item", init) == ["gramagents.records"]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_modules_and_functions_stay_small(path: Path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []
