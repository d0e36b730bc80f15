"""Names a module exports without importing them: each is imported the first time it is used.

A module lists its names as `name -> "module:attribute"` and hands its namespace here; the
two functions returned are its PEP 562 `__getattr__` and `__dir__`. Importing such a module
imports only this one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    module: str, namespace: dict[str, Any], exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the module `module` whose globals are `namespace`."""

    def getattr_(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        where, _, attribute = target.partition(":")
        value = getattr(importlib.import_module(where), attribute)
        namespace[name] = value  # kept for the next lookup
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *exports})

    return getattr_, dir_
