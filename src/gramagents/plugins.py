"""How the engine finds what recipes add: one kind of registry, filled eagerly or lazily.

Every named thing a recipe or the engine adds (tasks, agents, readers, backends, report parts,
...) lives in a `Registry`. An entry is either registered (`register(name, value)`) or
announced by a target string resolved on first use (`lazy(name, target)`):

- `"package.module:attribute"`: the entry is that attribute of that module;
- `"package.module"`: importing the module registers the entry (a recipe module that calls
  `task(...)`, `agent(...)` at import), so a light recipe `__init__` names its heavy parts
  without importing them.

The engine never imports a recipe by name. Every package under `gramagents.recipes` (and any
module named by a `gramagents.recipes` entry point of an installed distribution, whose value
is a target string of the same form) is imported once, the first time a registry is asked for
a name it does not hold.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

from .errors import RegistryError

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
        for name, target in _entry_points():
            resolve(target, f"recipe entry point '{name}'")
            _loaded_recipes.append(name)


def _entry_points() -> Iterator[tuple[str, str]]:
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        yield point.name, point.value


def loaded_recipes() -> list[str]:
    """Names of the recipe packages imported so far."""
    load_recipes()
    return list(_loaded_recipes)


def resolve(target: str, entry: str) -> Any:
    """Import what `target` names: the attribute of `"module:attribute"`, or the module.

    Args:
        target: `"package.module:attribute"` or `"package.module"`.
        entry: the entry that names it, for the error message (`"metric 'm2'"`).

    Raises:
        RegistryError: The module does not exist or has no such attribute. A module that exists
            but fails on import (a missing optional package, a bug) raises its own error.
    """
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name + ".").startswith(error.name + "."):
            raise RegistryError(f"{entry}: no module '{module_name}' (target '{target}')") from None
        raise
    if not attribute:
        return module
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise RegistryError(
            f"{entry}: module '{module_name}' has no attribute '{attribute}' (target '{target}')"
        ) from None


class Registry(Generic[T]):
    """Named things of one kind (tasks, agents, readers, backends, ...).

    `kind` names them in messages ("metric", "report part"). An entry may be hidden from the
    names offered to users (`listed=False`: a backend for tests).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._targets: dict[str, str] = {}
        self._unlisted: set[str] = set()

    def register(self, name: str, value: T, *, listed: bool = True) -> T:
        """Add `value` under `name` (a later registration replaces an earlier one)."""
        self._items[name] = value
        self._list(name, listed)
        return value

    def lazy(self, name: str, target: str, *, listed: bool = True) -> None:
        """Say where `name` comes from without importing it (`"module:attribute"` or `"module"`).

        The target is resolved the first time `name` is asked for; until then `names()` lists it.
        """
        self._targets[name] = target
        self._list(name, listed)

    def announce(self, name: str, module: str) -> None:
        """Say that importing `module` registers `name` (`lazy` with a module target)."""
        self.lazy(name, module)

    def _list(self, name: str, listed: bool) -> None:
        if listed:
            self._unlisted.discard(name)
        else:
            self._unlisted.add(name)

    def get(self, name: str) -> T | None:
        """The entry called `name`, resolving its target if need be; None if there is none.

        Raises:
            RegistryError: The entry's target cannot be imported, or its module does not
                register it.
        """
        item = self._items.get(name)
        if item is not None:
            return item
        if name not in self._targets:
            load_recipes()
            if name in self._items or name not in self._targets:
                return self._items.get(name)
        with _lock:
            return self._resolve(name)

    def _resolve(self, name: str) -> T:
        if name in self._items:
            return self._items[name]
        target = self._targets[name]
        entry = f"{self.kind} '{name}'"
        value = resolve(target, entry)
        if ":" in target:
            self._items[name] = value
        elif name not in self._items:
            raise RegistryError(f"{entry}: importing '{target}' did not register it")
        return self._items[name]

    def names(self, *, listed_only: bool = False) -> list[str]:
        """Names of every entry, registered or only announced, sorted."""
        load_recipes()
        every = {*self._items, *self._targets}
        return sorted(n for n in every if not (listed_only and n in self._unlisted))

    def loaded(self) -> dict[str, T]:
        """The entries registered so far (announced ones not imported), in registration order."""
        load_recipes()
        return dict(self._items)

    def all(self) -> dict[str, T]:
        """Every entry, resolving the announced ones; in registration order."""
        for name in self.names():
            self.get(name)
        return dict(self._items)

    def unregister(self, name: str) -> None:
        """Remove `name` (tests register throw-away entries)."""
        self._items.pop(name, None)
        self._targets.pop(name, None)
        self._unlisted.discard(name)


COMMANDS: Registry[object] = Registry("command")
"""Extra `gramagents` subcommands a recipe adds (typer command functions, by name)."""
