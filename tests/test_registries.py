"""One kind of registry for every concept, and its one lazy mechanism: target strings."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gramagents.errors import GramagentsError, RegistryError
from gramagents.models.registry import BACKENDS, known_backends
from gramagents.plugins import Registry
from gramagents.report.build import BUILD_SECTIONS
from gramagents.report.charts import CHARTS
from gramagents.report.layouts import LAYOUTS
from gramagents.report.markdown import FILE_SECTIONS, SECTIONS
from gramagents.report.parts import REPORT_PARTS, PartsOfKind

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "gramagents"

CACHES = {
    ("judging/rubric.py", "_MODELS"): "judge reply models, one per rubric file and hash",
    ("models/hf_load.py", "_LOADED"): "weights loaded once per process",
    ("recipes/gec/annotate.py", "_LOADED"): "the ERRANT annotator, loaded once",
    ("runtime/embeddings.py", "_MODELS"): "embedding models loaded once",
    ("runtime/run.py", "_HELD"): "the run folders this process holds locked",
    ("plugins.py", "_loaded_recipes"): "the recipe packages imported so far",
}
"""Module-level containers that functions fill and that are not registries (why, for each)."""

CONTAINERS = {"dict", "set", "list", "defaultdict", "OrderedDict"}
FILLS = {"add", "append", "setdefault", "update", "extend", "insert"}


def _module_containers(tree: ast.Module) -> set[str]:
    found = set()
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if not isinstance(target, ast.Name) or value is None:
            continue
        called = isinstance(value, ast.Call) and getattr(value.func, "id", "") in CONTAINERS
        if isinstance(value, ast.Dict | ast.Set | ast.List) or called:
            found.add(target.id)
    return found


def _filled(node: ast.AST) -> str | None:
    """The name a statement or call adds to (`X[k] = v`, `X.add(v)`, ...), if any."""
    targets = node.targets if isinstance(node, ast.Assign) else []
    targets += [node.target] if isinstance(node, ast.AugAssign) else []
    for target in targets:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in FILLS and isinstance(node.func.value, ast.Name):
            return node.func.value.id
    return None


def bare_registries(source: str) -> set[str]:
    """Module-level dicts, sets and lists that a function of the module fills."""
    tree = ast.parse(source)
    containers = _module_containers(tree)
    return {
        name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if (name := _filled(node)) in containers
    }


def test_the_check_finds_a_registry_kept_in_a_bare_dict():
    old_backends = (
        "_FACTORIES: dict[str, Callable[[], type]] = {}\n"
        "_UNLISTED: set[str] = set()\n"
        "def backend(name, listed=True):\n"
        "    def register(factory):\n"
        "        _FACTORIES[name] = factory\n"
        "        if not listed:\n"
        "            _UNLISTED.add(name)\n"
        "    return register\n"
    )
    assert bare_registries(old_backends) == {"_FACTORIES", "_UNLISTED"}
    assert bare_registries("NAMES = {}\ndef f(NAMES):\n    return NAMES.get('x')\n") == set()


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_no_module_keeps_a_registry_of_its_own(path: Path):
    where = path.relative_to(PACKAGE).as_posix()
    found = bare_registries(path.read_text(encoding="utf-8"))
    assert {name for name in found if (where, name) not in CACHES} == set()


def _classes_with_register_and_get() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                if {"register", "get"} <= methods:
                    found.add(f"{path.relative_to(PACKAGE).as_posix()}:{node.name}")
    return found


def _registry_globals() -> list[tuple[str, str]]:
    """(module, name) of every module-level object made by calling `Registry` or a view."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        module = ".".join(("gramagents", *(p for p in parts if p != "__init__")))
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Call):
                called = getattr(node.value.func, "id", "")
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                if called in {"Registry", "PartsOfKind"} and isinstance(target, ast.Name):
                    found.append((module, target.id))
    return found


def test_every_registry_is_the_one_kind():
    assert _classes_with_register_and_get() == {
        "plugins.py:Registry",
        "report/parts.py:PartsOfKind",
    }
    found = _registry_globals()
    assert len(found) >= 15 and ("gramagents.models.registry", "BACKENDS") in found
    for module, name in found:
        value = getattr(importlib.import_module(module), name)
        if isinstance(value, PartsOfKind):
            assert value.registry is REPORT_PARTS, name
            assert set(vars(value)) == {"kind", "registry"}, name  # a view holds nothing
        else:
            assert isinstance(value, Registry), f"{module}.{name}"


def test_the_report_registries_are_kinds_of_one():
    kinds = {view.kind for view in (LAYOUTS, SECTIONS, FILE_SECTIONS, CHARTS, BUILD_SECTIONS)}
    assert kinds == {"paper-table", "section", "files", "chart", "build-section"}
    names = REPORT_PARTS.names()
    assert "chart/grammar-book-radar" in names and "build-section/grammar-book" in names
    assert "grammar-book-radar" in CHARTS.names() and "grammar-book-radar" not in SECTIONS.names()
    # one name, two kinds: the syntax recipe's section and chart of its series
    assert "syntax-series" in SECTIONS.names() and "syntax-series" in CHARTS.names()


def test_a_view_registers_and_removes_parts_of_its_kind_only():
    def section(manifest, summary):
        return ["x"]

    SECTIONS.register("toy-parts", section)
    try:
        assert SECTIONS.get("toy-parts") is section and CHARTS.get("toy-parts") is None
        assert REPORT_PARTS.get("section/toy-parts").kind == "section"
        assert SECTIONS.all()["toy-parts"] is section
        assert "toy-parts" not in CHARTS.all()
    finally:
        SECTIONS.unregister("toy-parts")
    assert "section/toy-parts" not in REPORT_PARTS.names()
    with pytest.raises(ValueError, match="no report part kind 'plots'"):
        PartsOfKind("plots")  # type: ignore[arg-type]


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Iterator[str]:
    """A package on the path, written for the test, that nothing has imported yet."""
    name = f"toyplugin_{tmp_path.name.replace('-', '_')}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "heavy.py").write_text("VALUE = ('heavy', 1)\n")
    (package / "registers.py").write_text(
        f"from {__name__} import TOY\nTOY.register('made', 'by import')\n"
    )
    (package / "broken.py").write_text("import toyplugin_dependency_nobody_has\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[module]


TOY: Registry[object] = Registry("toy thing")


def test_an_attribute_target_is_imported_on_first_use_only(plugin):
    toys: Registry[object] = Registry("toy thing")
    toys.lazy("heavy", f"{plugin}.heavy:VALUE")
    assert f"{plugin}.heavy" not in sys.modules
    assert "heavy" in toys.names() and "heavy" not in toys.loaded()
    assert f"{plugin}.heavy" not in sys.modules
    assert toys.get("heavy") == ("heavy", 1)
    assert f"{plugin}.heavy" in sys.modules and toys.loaded()["heavy"] == ("heavy", 1)


def test_a_module_target_is_a_module_that_registers_the_entry(plugin):
    TOY.announce("made", f"{plugin}.registers")
    TOY.lazy("forgotten", f"{plugin}.heavy")
    try:
        assert TOY.get("made") == "by import"
        with pytest.raises(RegistryError) as caught:
            TOY.get("forgotten")
        assert str(caught.value) == (
            f"toy thing 'forgotten': importing '{plugin}.heavy' did not register it"
        )
    finally:
        for name in ("made", "forgotten"):
            TOY.unregister(name)


def test_a_target_that_names_nothing_is_one_line_naming_the_entry(plugin):
    toys: Registry[object] = Registry("toy thing")
    toys.lazy("lost", f"{plugin}.nowhere:VALUE")
    toys.lazy("typo", f"{plugin}.heavy:VALEU")
    toys.lazy("no-package", "toyplugin_nobody_wrote_this.mod")
    expected = {
        "lost": f"toy thing 'lost': no module '{plugin}.nowhere' (target '{plugin}.nowhere:VALUE')",
        "typo": (
            f"toy thing 'typo': module '{plugin}.heavy' has no attribute 'VALEU' "
            f"(target '{plugin}.heavy:VALEU')"
        ),
        "no-package": (
            "toy thing 'no-package': no module 'toyplugin_nobody_wrote_this.mod' "
            "(target 'toyplugin_nobody_wrote_this.mod')"
        ),
    }
    for name, message in expected.items():
        with pytest.raises(RegistryError) as caught:
            toys.get(name)
        assert isinstance(caught.value, GramagentsError) and str(caught.value) == message


def test_a_missing_dependency_of_a_module_that_exists_is_not_disguised(plugin):
    toys: Registry[object] = Registry("toy thing")
    toys.lazy("broken", f"{plugin}.broken:VALUE")
    with pytest.raises(ModuleNotFoundError, match="toyplugin_dependency_nobody_has"):
        toys.get("broken")


def test_backends_are_lazy_targets_and_the_test_backend_is_unlisted():
    assert set(known_backends(listed_only=True)) == {"hf", "openai", "smollm2"}
    assert "scripted" in known_backends()
    code = (
        "import sys\n"
        "from gramagents.models.registry import BACKENDS\n"
        "assert 'gramagents.models.openai_compat' not in sys.modules\n"
        "assert BACKENDS.get('openai').__name__ == 'OpenAIBackend'\n"
        "assert 'gramagents.models.hf' not in sys.modules and 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert BACKENDS.get("nope") is None


def test_a_broken_command_target_is_one_line_from_the_cli(tmp_path):
    code = (
        "import sys\n"
        "from gramagents.plugins import COMMANDS\n"
        "COMMANDS.lazy('broken', 'toyplugin_nobody_wrote_this.cli:command')\n"
        "sys.argv = ['gramagents', 'broken']\n"
        "from gramagents.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: command 'broken': no module 'toyplugin_nobody_wrote_this.cli' "
        "(target 'toyplugin_nobody_wrote_this.cli:command')"
    )
