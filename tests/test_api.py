"""`gramagents.api`, the one module recipes import: every name resolves, and lazily."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from gramagents import api

API_FILE = Path(api.__file__)


def test_every_name_in_the_table_resolves_to_where_it_lives():
    assert sorted(api.EXPORTS) == api.__all__
    for name, target in api.EXPORTS.items():
        module, _, attribute = target.partition(":")
        assert getattr(api, name) is getattr(importlib.import_module(module), attribute), name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        api.nope  # noqa: B018
    with pytest.raises(ImportError):
        exec("from gramagents.api import nope", {})


def test_dir_lists_the_table():
    assert set(api.EXPORTS) <= set(dir(api))


def test_the_type_checkers_block_names_the_same_targets():
    """The `if TYPE_CHECKING:` imports say what the table says, name for name."""
    tree = ast.parse(API_FILE.read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If))
    seen = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names:
            seen[alias.asname or alias.name] = f"gramagents.{node.module}:{alias.name}"
    assert seen == api.EXPORTS


def test_importing_the_api_imports_nothing_until_a_name_is_used():
    code = (
        "import sys\n"
        "import gramagents.api as api\n"
        "print(sorted(m for m in sys.modules if m.startswith('gramagents')))\n"
        "api.InputError\n"
        "print('gramagents.errors' in sys.modules, 'gramagents.workflow.build' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['gramagents', 'gramagents.api', 'gramagents.lazy']", "True False"]
