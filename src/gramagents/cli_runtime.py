"""How a command runs in its process: its threads, its usage errors, its recipe commands.

Only the command line calls these; the library changes nothing process-wide by itself.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import typer

from .errors import GramagentsError
from .redact import redact


def fail(exc: GramagentsError) -> typer.Exit:
    """Print a user error as one line on stderr (credentials masked); the exit carries its code."""
    print(redact(f"error: {exc}"), file=sys.stderr)
    return typer.Exit(exc.exit_code)


def one_line_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """A recipe's `command` with a `GramagentsError` shown as one `error:` line."""

    @functools.wraps(command)  # typer reads the options from the wrapped signature
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GramagentsError as exc:
            raise fail(exc) from None

    return run


def apply_threads(requested: int | None) -> None:
    """Fit torch's threads to the machine for this command (runtime/threads.py)."""
    from .runtime.threads import apply_threads as apply

    apply(requested)


def standalone(app: typer.Typer) -> int:
    """Run `app`; a usage error is one `error:` line, as every other failure is."""
    try:
        result = app(standalone_mode=False)
    except typer.Abort:
        print("interrupted", file=sys.stderr)
        return 130
    except typer.TyperException as exc:  # click's usage errors (a missing option, ...)
        context = getattr(exc, "ctx", None)
        usage = f" (see '{context.command_path} --help')" if context is not None else ""
        message = plain(exc.format_message())  # type: ignore[attr-defined]
        if message:  # no message: the help was shown (a command given no arguments)
            print(f"error: {message}{usage}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 2))
    return result if isinstance(result, int) else 0


def plain(message: str) -> str:
    """A usage error's message as one plain clause: the validator's prefix and full stop gone.

    ("Invalid value for '--agents': Value error, 'of' is not one of 'on', 'off'." reads
    "Invalid value for '--agents': 'of' is not one of 'on', 'off'".)
    """
    return message.replace("Value error, ", "").rstrip(".")


def may_name_a_recipe_command(app: typer.Typer, args: list[str]) -> bool:
    """Whether the command line may ask for a recipe's subcommand (a built-in never does)."""
    first = next((arg for arg in args if not arg.startswith("-")), None)
    builtin = {
        c.name or (c.callback.__name__.replace("_", "-") if c.callback else "")
        for c in app.registered_commands
    }
    builtin |= {g.name for g in app.registered_groups if g.name}
    return first is None or first not in builtin


def format_help() -> str:
    """`eval --format`'s help: every dataset format registered, the recipes' included."""
    from .sources.datasets import known_formats

    names = ", ".join(known_formats())
    return f"Dataset format: {names} (gramagents also reads exported folders)."


def limit_help() -> str:
    """`build --limit`'s help: what each recipe's source reader counts (from the registry)."""
    from .resources import available_recipes
    from .sources import SOURCES
    from .workflow.recipe import load_recipe

    units = []
    for name in available_recipes():
        try:
            recipe, _ = load_recipe(name)
            source = SOURCES.get(recipe.reader.reader)
        except GramagentsError:  # a broken recipe file is reported when it is built
            continue
        if source is not None:
            units.append(f"{source.unit} ({name})")
    return (
        f"Read only the first N units of the source, as its recipe counts them: {', '.join(units)}."
    )


def add_commands(app: typer.Typer) -> None:
    """Add the subcommands recipes register (e.g. `m2`) to `app`, once each."""
    from .plugins import COMMANDS

    present = {c.name for c in app.registered_commands}
    try:  # a command announced by a target that names no module: one line
        commands = COMMANDS.all()
    except GramagentsError as exc:
        sys.exit(fail(exc).exit_code)
    for name, command in commands.items():
        if name not in present:
            app.command(name=name)(one_line_errors(command))  # type: ignore[arg-type]
