"""`gramagents profile`: the command line of profiles (profile/run.py does the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..cli import (
    Concurrency,
    Limit,
    NoCache,
    OnChange,
    ResumeChanged,
    RunDir,
    Threads,
    _command,
    _run,
    _say,
    err,
    fail,
)
from ..cli_judges import AllowSelfJudge, JudgeModel, JuryRule
from ..cli_runtime import apply_threads, progress_display
from ..errors import GramagentsError


def _sources(given: list[str] | None) -> dict[str, Path]:
    """`ENTRY=PATH` options as a mapping."""
    sources: dict[str, Path] = {}
    for value in given or []:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise fail(GramagentsError(f"--source {value}: expected ENTRY=PATH"))
        sources[name] = Path(path)
    return sources


def profile(
    suite: Annotated[
        str, typer.Option(help="Suite name (zh-pedagogy, en-syntax) or a suite YAML file.")
    ],
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="Model spec (repeatable): each is profiled and compared."),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(help="ENTRY=PATH: the source or dataset of a suite entry (repeatable)."),
    ] = None,
    run_dir: RunDir = None,
    limit: Limit = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling and the bootstrap.")] = 1234,
    boot: Annotated[int, typer.Option(min=0, help="Bootstrap resamples (0: no intervals).")] = (
        2000
    ),
    agent_model: Annotated[
        str | None, typer.Option(help="Model spec for the agents of builds that run them.")
    ] = None,
    judge: JudgeModel = None,
    jury: JuryRule = "median",
    allow_self_judge: AllowSelfJudge = False,
    concurrency: Concurrency = 16,
    no_cache: NoCache = False,
    resume_changed: ResumeChanged = OnChange.refuse,
    threads: Threads = None,
) -> None:
    """A model's grammar competence across every method of a suite, with paired comparisons."""
    from .compute import Settings
    from .run import ProfileOptions, run_profile

    apply_threads(threads)

    options = ProfileOptions(
        suite=suite,
        models=model or ["smollm2"],
        sources=_sources(source),
        run_dir=run_dir,
        limit=limit,
        settings=Settings(boot=boot, seed=seed),
        agent_model=agent_model,
        judge=judge or None,
        jury=jury,
        allow_self_judge=allow_self_judge,
        concurrency=concurrency,
        use_cache=not no_cache,
        command=_command(),
        resume_changed=resume_changed.value,
    )
    result = _run(run_profile(options, lambda: progress_display(err)))
    _say_competences(result.data)
    _say(f"{result.manifest.status}: profile {result.folder.file('profile.json')}")
    _say(f"view: {result.folder.file('report.html')} (open in a browser)")
    _say(f"report: {result.folder.file('report.md')}")
    if result.manifest.status != "complete":
        raise typer.Exit(1)


def _say_competences(data: dict[str, Any]) -> None:
    """Each model's competences, and how its minimal pairs were measured (or why not)."""
    methods, competences = data.get("methods", {}), data["competences"]
    for model_name in dict.fromkeys([*competences, *methods]):  # one measured nowhere too
        blocks, chosen = competences.get(model_name, {}), methods.get(model_name, {})
        shown = ", ".join(_competence(c, b, chosen.get(c)) for c, b in blocks.items())
        if shown:
            _say(f"{model_name}: {shown}")
        for competence, how in chosen.items():
            if how["method"] is None:
                _say(f"{model_name}: {competence} not measured: {how['reason']}")
            elif blocks.get(competence):
                _say(f"{model_name}: {competence} measured by {how['described']}")


def _competence(name: str, block: dict[str, Any] | None, how: dict[str, Any] | None) -> str:
    """A competence's chance-corrected score, as the summary line shows it."""
    if how is not None and how["method"] is None:
        return f"{name} not measured"
    return f"{name} {block['corrected']['value']:.2f}" if block else f"{name} —"


def add_profile_command(app: typer.Typer) -> None:
    """Add `gramagents profile` to the command line's app, once."""
    if "profile" not in {c.name for c in app.registered_commands}:
        app.command(name="profile")(profile)
