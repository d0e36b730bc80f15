"""How the engine finds recipes: registries filled by recipe packages, and their discovery.

The engine never imports a recipe by name. Every package under `gramagents.recipes` (and any
module named by a `gramagents.recipes` entry point of an installed distribution) is imported
once, the first time a registry is asked for something; its `__init__` registers what the
recipe adds. Heavy parts (bank builders, agents, readers) are announced by module and imported
only when a build or an eval first asks for them by name.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

RECIPES_PACKAGE = "gramagents.recipes"
ENTRY_POINT_GROUP = "gramagents.recipes"

_log = logging.getLogger(__name__)
_lock = threading.RLock()
_loaded = False
_loaded_recipes: list[str] = []


def load_recipes() -> None:
    """Import every recipe package once (packaged ones, then entry points)."""
    global _loaded
    if _loaded:
        return
    with _lock:
        if _loaded:
            return
        _loaded = True  # set first: a recipe that asks a registry while loading must not recurse
        package = importlib.import_module(RECIPES_PACKAGE)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.ispkg and not info.name.startswith("_"):
                importlib.import_module(f"{RECIPES_PACKAGE}.{info.name}")
                _loaded_recipes.append(info.name)
        for name, module in _entry_points():
            importlib.import_module(module)
            _loaded_recipes.append(name)


def _entry_points() -> Iterator[tuple[str, str]]:
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        yield point.name, point.value.split(":", 1)[0]


def loaded_recipes() -> list[str]:
    """Names of the recipe packages imported so far."""
    load_recipes()
    return list(_loaded_recipes)


class Registry(Generic[T]):
    """Named things of one kind (tasks, agents, readers, ...) that recipes register.

    An entry can be announced by module before it exists: `announce(name, module)` says that
    importing `module` registers `name`, so a light recipe `__init__` can name its heavy parts
    without importing them.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._modules: dict[str, str] = {}

    def register(self, name: str, value: T) -> T:
        """Add `value` under `name` (a later registration replaces an earlier one)."""
        self._items[name] = value
        return value

    def announce(self, name: str, module: str) -> None:
        """Say that importing `module` registers `name`."""
        self._modules[name] = module

    def get(self, name: str) -> T | None:
        """The entry called `name`, importing its announced module if need be."""
        item = self._items.get(name)
        if item is not None:
            return item
        load_recipes()
        if name not in self._items and name in self._modules:
            importlib.import_module(self._modules[name])
        return self._items.get(name)

    def names(self) -> list[str]:
        """Names of every entry, imported or only announced, sorted."""
        load_recipes()
        return sorted({*self._items, *self._modules})

    def loaded(self) -> dict[str, T]:
        """The entries registered so far (announced ones not imported), in registration order."""
        load_recipes()
        return dict(self._items)

    def all(self) -> dict[str, T]:
        """Every entry, importing the announced ones."""
        for name in self.names():
            self.get(name)
        return dict(self._items)

    def unregister(self, name: str) -> None:
        """Remove `name` (tests register throw-away entries)."""
        self._items.pop(name, None)
        self._modules.pop(name, None)


COMMANDS: Registry[object] = Registry("command")
"""Extra `gramagents` subcommands a recipe adds (typer command functions, by name)."""
