"""Errors a user can cause. Each prints as one line and exits with code 2."""

from __future__ import annotations

from pathlib import Path


class GramagentsError(Exception):
    """Base class for errors caused by input, configuration or the environment."""

    exit_code = 2


class InputError(GramagentsError):
    """A problem in a file the user gave, located by file, line and field."""

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        message = " ".join(message.splitlines())  # one line, whatever the data quoted in it
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': {message}" if field else message
        super().__init__(f"{where}: {what}")


class SpecError(GramagentsError):
    """A model spec string that cannot be understood."""

    def __init__(self, spec: str, message: str) -> None:
        from .redact import redact

        self.spec = redact(spec)
        super().__init__(redact(f"--model '{spec}': {message}"))


class BackendUnavailable(GramagentsError):
    """A model server that cannot be reached, or refuses our credentials."""


class NoLoglikelihood(BackendUnavailable):
    """A model that gives no log-probabilities of a prompt (a chat API).

    Minimal pairs can be asked of it only as a forced choice (`--pairs choice`).
    """


class MissingDependency(GramagentsError):
    """An optional package that a feature needs is not installed."""

    def __init__(self, package: str, feature: str, install: str | None = None) -> None:
        hint = install or f"pip install {package}"
        super().__init__(f"{feature} needs the package '{package}': {hint}")


class MissingExtra(MissingDependency):
    """A feature whose optional packages (one of gramagents' extras) are not installed."""

    def __init__(self, feature: str, extra: str) -> None:
        self.extra = extra
        GramagentsError.__init__(
            self, f"{feature} needs the '{extra}' extra: pip install 'gramagents[{extra}]'"
        )


class RunError(GramagentsError):
    """A run folder that cannot be used for the command given."""


class NothingToAsk(GramagentsError):
    """An eval whose every item was left out (minimal pairs no method of the model measures)."""


class RegistryError(GramagentsError):
    """A registry entry whose lazy target names a module or attribute that does not exist."""
