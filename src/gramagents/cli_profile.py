"""`gramagents profile`: parse, call `gramagents.jobs.aprofile`, print the competences."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .cli_judges import AllowSelfJudge, JudgeModel, JuryRule
from .cli_options import Concurrency, Limit, NoCache, OnChange, ResumeChanged, RunDir, Threads
from .cli_runtime import apply_threads, command_line, fail, progress, run_job, say
from .errors import GramagentsError

if TYPE_CHECKING:
    from .results import ProfileResult


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
    from . import jobs

    apply_threads(threads)
    result = run_job(
        jobs.aprofile(
            suite,
            model or ["smollm2"],
            run_dir,
            sources=_sources(source),
            limit=limit,
            seed=seed,
            boot=boot,
            agent_model=agent_model,
            judge_models=judge or (),
            jury=jury,
            allow_self_judge=allow_self_judge,
            concurrency=concurrency,
            cache=not no_cache,
            resume_changed=resume_changed.value,
            progress=progress(),
            command=command_line(),
        )
    )
    _say_profile(result)
    if not result.complete:
        raise typer.Exit(1)


def _say_profile(result: ProfileResult) -> None:
    """Each model's chance-corrected competences, how its pairs were asked, where it is."""
    _say_competences(result.data)
    say(f"{result.manifest.status}: profile {result.path / 'profile.json'}")
    if result.view_path is not None:
        say(f"view: {result.view_path} (open in a browser)")
    say(f"report: {result.report_path}")


def _say_competences(data: dict[str, Any]) -> None:
    """Each model's competences, and how its minimal pairs were measured (or why not)."""
    methods, competences = data.get("methods", {}), data.get("competences", {})
    for model_name in dict.fromkeys([*competences, *methods]):  # one measured nowhere too
        blocks, chosen = competences.get(model_name, {}), methods.get(model_name, {})
        shown = ", ".join(_competence(c, b, chosen.get(c)) for c, b in blocks.items())
        if shown:
            say(f"{model_name}: {shown}")
        for competence, how in chosen.items():
            if how["method"] is None:
                say(f"{model_name}: {competence} not measured: {how['reason']}")
            elif blocks.get(competence):
                say(f"{model_name}: {competence} measured by {how['described']}")


def _competence(name: str, block: dict[str, Any] | None, how: dict[str, Any] | None) -> str:
    """A competence's chance-corrected score, as the summary line shows it."""
    if how is not None and how["method"] is None:
        return f"{name} not measured"
    return f"{name} {block['corrected']['value']:.2f}" if block else f"{name} —"
