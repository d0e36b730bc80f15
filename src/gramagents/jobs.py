"""The jobs from Python: `build`, `evaluate` and `profile`, each also as a coroutine.

Each takes the command line's options as keyword arguments, with the same names and defaults
(`--no-cache` is `cache=False`, `--judge-model` is `judge_models`, `--format` is `format`),
fills the same option object the command fills (`BuildOptions`, `EvalOptions`,
`ProfileOptions`) and runs the same code; the command line calls these functions. Errors
are the `GramagentsError` subclasses the command prints as one `error:` line.

A call changes nothing process-wide: no threads left behind, no logging, environment or
collector settings (the command line sets those for its own process, `process.py`, and
chooses torch's threads, `--threads`). The plain functions wait for the job, inside a
running event loop too (a notebook cell, runtime/loop.py); the `a`-prefixed ones are
coroutines for callers that have a loop of their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .errors import GramagentsError, InputError
from .progress import ProgressSink
from .redact import redact

if TYPE_CHECKING:
    from .results import BuildResult, EvalResult, ProfileResult

T = TypeVar("T")
PathLike = str | Path
Progress = bool | ProgressSink
"""True: a bar (a terminal, a notebook) or plain lines on stderr; False: nothing; or a sink."""
ResumeChanged = Literal["refuse", "reask"]
Jury = Literal["median", "mean", "majority"]
Pairs = Literal["loglik", "choice"]

RENAMED = {"cache": "use_cache", "format": "fmt"}
"""Python names whose option-object field is named otherwise."""
OWN = {"progress"}
"""Arguments of the functions that are not options of the run."""


def _wait(job: Callable[..., Coroutine[Any, Any, T]], arguments: dict[str, Any]) -> T:
    from .runtime.loop import run_sync

    return run_sync(lambda: job(**arguments))


def _fields(
    option_type: type, name: str, arguments: Mapping[str, Any], apart: Sequence[str] = ()
) -> dict[str, Any]:
    """`arguments` as `option_type`'s fields (renamed where they differ), checked.

    Every argument but the function's own (`progress`) and those set `apart` (which the
    caller turns into fields itself) is a field of the same name: an option added to the
    option object reaches Python by one keyword argument.
    """
    fields = {f.name for f in dataclasses.fields(option_type)}
    values = {RENAMED.get(k, k): v for k, v in arguments.items() if k not in OWN and k not in apart}
    unknown = sorted(set(values) - fields)
    assert not unknown, f"{name}: {unknown} are not fields of {option_type.__name__}"
    values["command"] = list(values.get("command") or _call_text(name, arguments))
    if values.get("resume_changed", "refuse") not in ("refuse", "reask"):
        raise GramagentsError(
            f"resume_changed: '{values['resume_changed']}' is not one of 'refuse', 'reask'"
        )
    return values


def _call_text(name: str, arguments: Mapping[str, Any]) -> list[str]:
    """What a run's manifest records as its command: the call, defaults left out, masked."""
    import inspect

    defaults = {p.name: p.default for p in inspect.signature(globals()[name]).parameters.values()}
    shown = []
    for key, value in arguments.items():
        if key in OWN or key == "command" or value == defaults.get(key, inspect.Parameter.empty):
            continue
        text = repr(str(value) if isinstance(value, Path) else value)
        shown.append(
            redact(text if defaults.get(key) is inspect.Parameter.empty else f"{key}={text}")
        )
    return [f"gramagents.{name}", *shown]


def _names(value: str | Sequence[str]) -> list[str]:
    """A model spec or several, as a list (a lone string is one spec, not its letters)."""
    return [value] if isinstance(value, str) else list(value)


def _judge(judge_models: str | Sequence[str]) -> list[str] | None:
    """The rubric judges, a jury when several (None: the recipe's or suite's, else smollm2)."""
    return _names(judge_models) or None


def _display(progress: Progress) -> Callable[[], ProgressSink]:
    """A fresh progress sink per phase of work, as `progress` asks."""
    from .progress import SilentProgress, display

    if progress is True:
        return display
    if progress is False or progress is None:
        return SilentProgress
    sink = progress
    return lambda: sink


def check_build_inputs(recipe: str, source: PathLike | None) -> Path:
    """The recipe readable and the source there, before the build's libraries load."""
    from .workflow.recipe import load_recipe

    load_recipe(recipe)
    if source is None:
        raise GramagentsError("build: --source is required (the file or folder it reads)")
    if not Path(source).exists():
        raise InputError(source, "no such file or folder (the build's --source)")
    return Path(source)


# --- build ----------------------------------------------------------------------------------


def build(
    recipe: str,
    source: PathLike,
    run_dir: PathLike | None = None,
    *,
    agents: bool = True,
    agent_model: str | None = None,
    limit: int | None = None,
    seed: int | None = None,
    concurrency: int = 16,
    cache: bool = True,
    resume_changed: ResumeChanged = "refuse",
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> BuildResult:
    """Build a dataset: read a grammar source, run the recipe's agents, assemble banks.

    Args:
        recipe: A recipe name (`cpg`, `edu`, `syntax-qa`, ...) or a recipe file's path.
        source: The file or folder the recipe reads.
        run_dir: The run folder (default: a new one under `runs/`); a folder that holds
            this build already is built again there, asking only what the cache lacks.
        agents: Run the recipe's agents, or assemble the banks from the source as it is.
        agent_model: Model spec for every agent (default: the recipe's).
        limit: Read only the first N units of the source.
        seed: Seed for sampling and shuffles (default: the recipe's).
        concurrency: Requests in flight at once (API models).
        cache: Read and write the response cache.
        resume_changed: In a folder whose inputs changed: `refuse`, or `reask`.
        progress: True: a progress bar (or plain lines where there is no terminal or
            notebook); False: nothing; or a `ProgressSink`.
        command: What the manifest records as the command (default: this call).

    Returns:
        The build run: `dataset_path`, `summary` (items per task), `records()` (the items).

    Raises:
        GramagentsError: An unknown recipe, a missing or unreadable source, a model that
            cannot be reached, a run folder in use or holding another run.
    """
    return _wait(abuild, locals())


async def abuild(
    recipe: str,
    source: PathLike,
    run_dir: PathLike | None = None,
    *,
    agents: bool = True,
    agent_model: str | None = None,
    limit: int | None = None,
    seed: int | None = None,
    concurrency: int = 16,
    cache: bool = True,
    resume_changed: ResumeChanged = "refuse",
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> BuildResult:
    """`build` as a coroutine, for a caller with an event loop of its own."""
    arguments = dict(locals())
    path = check_build_inputs(recipe, source)
    from .results import BuildResult
    from .workflow.build import BuildOptions, run_build

    values = _fields(BuildOptions, "build", arguments, apart=("recipe",))
    values.update(source=path, run_dir=Path(run_dir) if run_dir is not None else None)
    result = await run_build(recipe, BuildOptions(**values), _display(progress)())
    return BuildResult(result.folder.path, result.manifest)


# --- evaluate -------------------------------------------------------------------------------


def evaluate(
    dataset: PathLike,
    models: str | Sequence[str] = ("smollm2",),
    run_dir: PathLike | None = None,
    *,
    format: str = "gramagents",  # noqa: A002 - the command line's --format
    answers: PathLike | None = None,
    limit: int | None = None,
    seed: int = 1234,
    concurrency: int = 16,
    cache: bool = True,
    judge_models: str | Sequence[str] = (),
    jury: Jury = "median",
    allow_self_judge: bool = False,
    conditioning: str | None = None,
    pairs: Pairs = "loglik",
    resume_changed: ResumeChanged = "refuse",
    view: bool = True,
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> EvalResult:
    """Evaluate models on a dataset and write per-item records and a report.

    Args:
        dataset: A build run folder, a `dataset.jsonl` or an exported folder.
        models: Model specs: `smollm2`, `hf:PATH_OR_ID`, `openai:MODEL[@BASE_URL]`.
        run_dir: The run folder (default: a new one under `runs/`); a folder that holds
            this eval already is resumed, asking only what it lacks.
        format: The dataset's format (`blimp`, `climp`, `cpg-eval`, ...).
        answers: Gold answers (CSV `id,answer`) for items the dataset has none for.
        limit: Sample at most N questions per task (with `seed`).
        seed: Seed of the sample.
        concurrency: Requests in flight at once (API models).
        cache: Read and write the response cache.
        judge_models: Model specs of the rubric judges of open-ended tasks, a jury when
            several (default: the recipe's judges, else the embedded model, a smoke test,
            not a judge).
        jury: How a jury's totals make one score: `median`, `mean` or `majority`.
        allow_self_judge: Let a named judge grade the answers of a model under test that it
            is (the report flags it).
        conditioning: How minimal pairs are scored: `spaced` or `bare` (default: the
            task's own).
        pairs: How minimal pairs are asked: `loglik` (log-probabilities compared) or
            `choice` (a forced choice in both orders, for any model, under TASK-CHOICE).
        resume_changed: In a folder whose inputs changed: `refuse`, or `reask`.
        view: Write the run viewer (`report.html`).
        progress: True: a progress bar (or plain lines where there is no terminal or
            notebook); False: nothing; or a `ProgressSink`.
        command: What the manifest records as the command (default: this call).

    Returns:
        The eval run: `summary` (`summary.json`'s rows), `records()` (score records),
        `report_path`; `complete` is False when some answers failed (run it again).

    Raises:
        GramagentsError: An unreadable dataset, a bad model spec, a model that cannot be
            reached, a run folder in use or holding another dataset's eval.
    """
    return _wait(aevaluate, locals())


async def aevaluate(
    dataset: PathLike,
    models: str | Sequence[str] = ("smollm2",),
    run_dir: PathLike | None = None,
    *,
    format: str = "gramagents",  # noqa: A002 - the command line's --format
    answers: PathLike | None = None,
    limit: int | None = None,
    seed: int = 1234,
    concurrency: int = 16,
    cache: bool = True,
    judge_models: str | Sequence[str] = (),
    jury: Jury = "median",
    allow_self_judge: bool = False,
    conditioning: str | None = None,
    pairs: Pairs = "loglik",
    resume_changed: ResumeChanged = "refuse",
    view: bool = True,
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> EvalResult:
    """`evaluate` as a coroutine, for a caller with an event loop of its own."""
    arguments = dict(locals())
    from .results import EvalResult
    from .workflow.eval import EvalOptions, run_eval

    values = _fields(EvalOptions, "evaluate", arguments, apart=("dataset", "judge_models"))
    values.update(
        models=_names(models),
        judge=_judge(judge_models),
        answers=Path(answers) if answers is not None else None,
        run_dir=Path(run_dir) if run_dir is not None else None,
    )
    result = await run_eval(dataset, EvalOptions(**values), _display(progress)())
    return EvalResult(result.folder.path, result.manifest)


# --- profile --------------------------------------------------------------------------------


def profile(
    suite: str,
    models: str | Sequence[str] = ("smollm2",),
    run_dir: PathLike | None = None,
    *,
    sources: Mapping[str, PathLike] | None = None,
    limit: int | None = None,
    seed: int = 1234,
    boot: int = 2000,
    agent_model: str | None = None,
    judge_models: str | Sequence[str] = (),
    jury: Jury = "median",
    allow_self_judge: bool = False,
    concurrency: int = 16,
    cache: bool = True,
    resume_changed: ResumeChanged = "refuse",
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> ProfileResult:
    """A model's grammar competence across every method of a suite, with paired comparisons.

    Args:
        suite: A suite name (`zh-pedagogy`, `en-syntax`) or a suite YAML file.
        models: Model specs; each is profiled and compared with the others.
        run_dir: The profile's folder (default: a new one under `runs/`); resumed when it
            holds this profile already.
        sources: Entry name to the source or dataset it reads (`--source ENTRY=PATH`).
        limit: Questions per task of every entry (default: the suite's).
        seed: Seed for sampling and the bootstrap.
        boot: Bootstrap resamples (0: no intervals).
        agent_model: Model spec for the agents of builds that run them.
        judge_models: Model specs of the rubric judges (a jury when several; default: the
            suite's, else the embedded model).
        jury: How a jury's totals make one score: `median`, `mean` or `majority`.
        allow_self_judge: Let a named judge grade the answers of a model under test that it
            is (the report flags it).
        concurrency: Requests in flight at once (API models).
        cache: Read and write the response cache.
        resume_changed: In a folder whose suite or inputs changed: `refuse`, or `reask`.
        progress: True: a progress bar (or plain lines); False: nothing; or a sink.
        command: What the manifest records as the command (default: this call).

    Returns:
        The profile: `summary` (a chance-corrected score per model and competence),
        `data` (`profile.json`), `records()` (the entries' score records).

    Raises:
        GramagentsError: An unknown suite or entry, a missing source, or what a build or
            eval of an entry raises.
    """
    return _wait(aprofile, locals())


async def aprofile(
    suite: str,
    models: str | Sequence[str] = ("smollm2",),
    run_dir: PathLike | None = None,
    *,
    sources: Mapping[str, PathLike] | None = None,
    limit: int | None = None,
    seed: int = 1234,
    boot: int = 2000,
    agent_model: str | None = None,
    judge_models: str | Sequence[str] = (),
    jury: Jury = "median",
    allow_self_judge: bool = False,
    concurrency: int = 16,
    cache: bool = True,
    resume_changed: ResumeChanged = "refuse",
    progress: Progress = True,
    command: Sequence[str] | None = None,
) -> ProfileResult:
    """`profile` as a coroutine, for a caller with an event loop of its own."""
    arguments = dict(locals())
    from .profiles.compute import Settings
    from .profiles.run import ProfileOptions, run_profile
    from .results import ProfileResult

    apart = ("judge_models", "seed", "boot")
    values = _fields(ProfileOptions, "profile", arguments, apart)
    values.update(
        models=_names(models),
        judge=_judge(judge_models),
        sources={name: Path(path) for name, path in (sources or {}).items()},
        settings=Settings(boot=boot, seed=seed),
        run_dir=Path(run_dir) if run_dir is not None else None,
    )
    result = await run_profile(ProfileOptions(**values), _display(progress))
    return ProfileResult(result.folder.path, result.manifest)
