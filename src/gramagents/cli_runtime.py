"""How a command runs in its process: its output, signals, threads, usage errors, recipe commands.

Only the command line calls these; the library changes nothing process-wide by itself.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console

from .errors import GramagentsError
from .redact import redact, redact_command

T = TypeVar("T")
_STOPPING = b"stopping: keeping the answers already made (Ctrl-C again stops at once)\n"
_STOPPED = b"stopped at once; re-run the same command to resume\n"


out = Console(markup=False, emoji=False, highlight=False)
err = Console(stderr=True, markup=False, emoji=False, highlight=False)
"""Text printed from data and names (model specs, ids, paths) stays as written: no console
markup (`[bold]`), emoji codes (`:zzz:`) or highlighting turn it into something else."""


def say(text: str) -> None:
    """Print a line of a command's result on stdout, as written."""
    out.print(text, soft_wrap=True, markup=False, emoji=False, highlight=False)


def command_line() -> list[str]:
    """The command line as runs record it: credentials in it masked."""
    return redact_command(sys.argv)


def progress() -> Any:
    """The progress display of a command: bars on a terminal, else plain lines on stderr."""
    from .progress import display

    return display(err)


def run_job(coroutine: Coroutine[Any, Any, T], graceful: bool = False) -> T:
    """Run a command's job (`run_command`); a user error or an interrupt as one line."""
    from .runtime.interrupt import Interrupted

    try:
        return run_command(coroutine, graceful=graceful)
    except GramagentsError as exc:
        raise fail(exc) from None
    except Interrupted:  # stopped by a signal, the run folder settled and let go
        print("interrupted; re-run the same command to resume", file=sys.stderr)
        leave_now(130)
    except KeyboardInterrupt:
        print("interrupted; re-run the same command to resume", file=sys.stderr)
        raise typer.Exit(130) from None


def fail(exc: GramagentsError) -> typer.Exit:
    """Print a user error as one line on stderr (credentials masked); the exit carries its code."""
    print(redact(f"error: {exc}"), file=sys.stderr)
    return typer.Exit(exc.exit_code)


def run_command(coroutine: Coroutine[Any, Any, T], graceful: bool = False) -> T:
    """Run a command's coroutine to its end, Ctrl-C and SIGTERM turned into a stop.

    The first signal asks everything running to stop (runtime/interrupt.py): local models end
    the decoding step in progress and start no batch. A `graceful` command (an eval) then
    keeps every answer already made, records the rest as not asked and ends with
    `Interrupted`; any other is cancelled, as `asyncio.run` would. A second signal ends the
    process at once, exit code 130: what was appended stays, and the folder resumes.
    """
    from .runtime.interrupt import STOP, Interrupted

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(coroutine)  # signals reach the main thread only
    main: list[asyncio.Task[Any]] = []

    def on_signal(signum: int, frame: Any) -> None:
        if STOP.requested:
            os.write(2, _STOPPED)
            os._exit(130)
        os.write(2, _STOPPING)
        STOP.request()
        if not graceful and main:
            main[0].get_loop().call_soon_threadsafe(main[0].cancel)

    async def run() -> T:
        main.append(asyncio.current_task())  # type: ignore[arg-type]
        return await coroutine

    STOP.reset(armed=graceful)
    earlier = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with asyncio.Runner() as runner:  # closing it waits for threads: they stop at once
            return runner.run(run())
    except asyncio.CancelledError:
        if STOP.requested:
            raise Interrupted() from None
        raise
    finally:
        for sig, handler in earlier.items():
            signal.signal(sig, handler)
        STOP.reset()


def leave_now(code: int) -> NoReturn:
    """End the process at once, its output flushed (a command that was stopped).

    Everything the command owns is closed by then (the run folder settled and unlocked, the
    cache closed); what is left is the interpreter's teardown of the model libraries, which
    takes seconds with a model loaded and would keep a stopped command waiting.
    """
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    logging.shutdown()
    os._exit(code)


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
