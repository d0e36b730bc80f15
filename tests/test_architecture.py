"""The shape of the code: an engine and recipes on it, in small modules and functions."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Collection
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "gramagents"
ENGINE = [p for p in PACKAGE.rglob("*.py") if "recipes" not in p.relative_to(PACKAGE).parts]
RECIPES = sorted((PACKAGE / "recipes").glob("*/**/*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 6
"""Parameters of a function or method, `self`/`cls` not counted, `*args` and `**kwargs` one
each. Command-line commands are exempt: typer makes each of their options a parameter; so are
the functions `gramagents` exports (`gramagents.build`, ...), which take the same options as
keyword arguments."""


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


Function = ast.FunctionDef | ast.AsyncFunctionDef


def _functions(source: str) -> list[Function]:
    """Every function and method in `source`, nested ones included."""
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, Function)]


def _first_line(node: Function) -> int:
    """Where the function starts as Python counts it (its first decorator, if any)."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _parameter_count(node: Function) -> int:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    count = len(names) + len(args.kwonlyargs) + (args.vararg is not None) + (args.kwarg is not None)
    return count - 1 if names[:1] in (["self"], ["cls"]) else count


def _long_functions(source: str) -> list[str]:
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in _functions(source)
        if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def _crowded_functions(source: str, commands: Collection[int] = ()) -> list[str]:
    """Functions over the parameter cap, but for those starting at a line in `commands`."""
    return [
        f"{node.name} ({_parameter_count(node)} parameters)"
        for node in _functions(source)
        if _parameter_count(node) > MAX_PARAMETERS and _first_line(node) not in commands
    ]


@pytest.fixture(scope="module")
def cli_commands() -> dict[Path, set[int]]:
    """Where each command of the command line starts (file, first line), as typer has them.

    The app is completed as `main` completes it (the recipes' commands), so that a command is
    exempt because typer registered it, not because a list names it.
    """
    from gramagents import cli
    from gramagents.cli_judges import add_judge_commands

    add_judge_commands(cli.app)
    cli.add_recipe_commands()
    found: dict[Path, set[int]] = {}
    apps = [cli.app]
    while apps:
        app = apps.pop()
        for command in app.registered_commands:
            code = inspect.unwrap(command.callback).__code__
            found.setdefault(Path(code.co_filename).resolve(), set()).add(code.co_firstlineno)
        apps += [group.typer_instance for group in app.registered_groups]
    import gramagents

    for name in gramagents.EXPORTS:  # the Python functions of the commands
        value = getattr(gramagents, name)
        if inspect.isfunction(value):
            code = inspect.unwrap(value).__code__
            found.setdefault(Path(code.co_filename).resolve(), set()).add(code.co_firstlineno)
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_modules_and_functions_stay_small(path: Path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_MODULE_LINES
    assert _long_functions(text) == []


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_functions_take_few_parameters(path: Path, cli_commands: dict[Path, set[int]]):
    text = path.read_text(encoding="utf-8")
    assert _crowded_functions(text, cli_commands.get(path.resolve(), set())) == []


def test_the_size_checks_see_a_long_function_and_a_crowded_one():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert _long_functions(f"def long():\n{body}") == ["long (61 lines)"]
    assert _long_functions(f"def short():\n{body[: body.rindex('    x')]}") == []
    source = (
        "def crowded(a, b, c, d, e, f, g): pass\n"
        "def starred(a, b, c, d, e, *args, **kwargs): pass\n"
        "def keywords(a, /, b, *, c, d, e, f, g): pass\n"
        "def six(a, b, c, d, e, f): pass\n"
        "class C:\n"
        "    def method(self, a, b, c, d, e, f): pass\n"
        "    @classmethod\n"
        "    def make(cls, a, b, c, d, e, f): pass\n"
        "    def nested(self):\n"
        "        def inner(a, b, c, d, e, f, g): pass\n"
    )
    assert sorted(_crowded_functions(source)) == [
        "crowded (7 parameters)",
        "inner (7 parameters)",
        "keywords (7 parameters)",
        "starred (7 parameters)",
    ]
    commands = "@app.command()\ndef command(a, b, c, d, e, f, g): pass\n"
    assert _crowded_functions(commands) == ["command (7 parameters)"]
    assert _crowded_functions(commands, {1}) == []


def test_the_exempt_functions_are_the_command_lines_commands(cli_commands):
    jobs = (PACKAGE / "jobs.py").resolve()
    starts = {node.name: _first_line(node) for node in _functions(jobs.read_text())}
    assert {starts["build"], starts["aevaluate"], starts["profile"]} <= cli_commands[jobs]
    assert starts["_fields"] not in cli_commands[jobs]
    cli = (PACKAGE / "cli.py").resolve()
    text = cli.read_text(encoding="utf-8")
    starts = {node.name: _first_line(node) for node in _functions(text)}
    assert {starts["evaluate"], starts["build"]} <= cli_commands[cli]
    profile = (PACKAGE / "cli_profile.py").resolve()
    in_profile = {node.name: _first_line(node) for node in _functions(profile.read_text("utf-8"))}
    assert in_profile["profile"] in cli_commands[profile]
    assert starts["_call"] not in cli_commands[cli]
    judges = (PACKAGE / "cli_judges.py").resolve()
    in_judges = {node.name: _first_line(node) for node in _functions(judges.read_text("utf-8"))}
    assert {in_judges["agree"], in_judges["judge_check"]} <= cli_commands[judges]
