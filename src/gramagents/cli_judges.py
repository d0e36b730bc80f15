"""The command line of judges: jury options, `judge-check`, `agree` and `rubric check`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer

from .cli_runtime import fail, progress
from .cli_runtime import say as _say
from .errors import GramagentsError

JudgeModel = Annotated[
    list[str] | None,
    typer.Option(
        "--judge-model",
        "--judge",
        help="Model spec of the rubric judge for open-ended tasks (repeatable: a jury, each "
        "judge judging every answer). Default: the recipe's judges, else the embedded model, "
        "a smoke test rather than a judge.",
    ),
]
JuryRule = Annotated[
    str,
    typer.Option("--jury", help="How a jury's totals make one score: median, mean or majority."),
]
AllowSelfJudge = Annotated[
    bool,
    typer.Option(
        "--allow-self-judge",
        help="Let a judge you name grade the answers of a model under test that it is "
        "(the report flags it).",
    ),
]


def agree(
    run: Annotated[Path, typer.Argument(help="Eval run folder with judged items.")],
    human: Annotated[
        Path, typer.Option("--human", help="CSV of human scores: item_id,rater,score.")
    ],
    model: Annotated[
        str | None, typer.Option("--model", help="Model whose answers to use (several judged).")
    ] = None,
    threshold: Annotated[
        float, typer.Option(help="Warn when judge-human Pearson r is below this.")
    ] = 0.87,
    within: Annotated[
        float, typer.Option(min=0, help="k of within-k agreement, in score points.")
    ] = 5.0,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    boot: Annotated[
        int, typer.Option("--boot", min=0, help="Bootstrap resamples (0: no intervals).")
    ] = 1000,
) -> None:
    """Judge-human agreement: correlations, kappa, alpha, intervals, ceiling, length bias."""
    from .judging.agreement import AgreementSettings
    from .judging.agreement_files import agree_run, summary_lines

    settings = AgreementSettings(threshold=threshold, within=within, n_boot=boot, seed=seed)
    try:
        report, paths = agree_run(run, human, model=model, settings=settings)
    except GramagentsError as exc:
        raise fail(exc) from None
    for line in summary_lines(report):
        _say(line)
    _say("wrote " + ", ".join(str(p) for p in paths))


rubric_app = typer.Typer(help="Rubrics for judges.", no_args_is_help=True)


@rubric_app.command("check")
def rubric_check(
    rubric: Annotated[str, typer.Argument(help="Rubric file, or the id of a packaged rubric.")],
) -> None:
    """Load a rubric and print its dimensions, or the one error that stops it."""
    from .judging.rubric import find_rubric

    try:
        loaded = find_rubric(rubric, user_named=True)
    except GramagentsError as exc:
        raise fail(exc) from None
    lo, hi = (f"{v:g}" for v in loaded.scale)
    _say(f"{loaded.path}: {loaded.id} version {loaded.version} ({loaded.task}), scale {lo}-{hi}")
    for dim in loaded.dimensions:
        _say(f"  {dim.points:g}  {dim.name}")
        for criterion in dim.criteria:
            _say(f"        {criterion}")
    _say(f"hash {loaded.hash[:16]}")
    _say("ok")


def judge_check(
    run: Annotated[Path, typer.Argument(help="An eval run folder with judged answers.")],
    limit: Annotated[
        int, typer.Option(min=1, help="Judged answers probed at most, sampled with --seed.")
    ] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the sample, the probes and the bootstrap.")] = (
        1234
    ),
    probe: Annotated[
        list[str] | None,
        typer.Option(help="A probe (repeatable): injection, length, repeat. Default: all."),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(min=0, max=1, help="Least change (share of the scale) a flag needs."),
    ] = 0.05,
    boot: Annotated[int, typer.Option(min=100, help="Bootstrap resamples of the intervals.")] = (
        2000
    ),
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge-model",
            help="Full spec of a judge of the run (repeatable), where its name and recorded "
            "endpoint are not enough (a key, a timeout).",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight at once.")] = 16,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = (False),
) -> None:
    """Probe a run's judges (injection, length, repeat) and flag those whose scores move."""
    from .judging.check import CheckOptions
    from .judging.check import judge_check as run_check

    options = CheckOptions(
        limit=limit,
        seed=seed,
        probes=tuple(dict.fromkeys(probe)) if probe else CheckOptions().probes,
        threshold=threshold,
        n_boot=boot,
        judges=list(judge or []),
        concurrency=concurrency,
        use_cache=not no_cache,
    )
    try:
        result = asyncio.run(run_check(run, options, progress()))
    except GramagentsError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt:
        print("interrupted; nothing written", file=sys.stderr)
        raise typer.Exit(130) from None
    for row in result.data["rows"]:
        _say(_row_line(row))
    _say(f"{result.data['answers']} answers probed, {result.requests_sent} requests sent")
    _say("wrote " + ", ".join(str(p) for p in result.paths))


def _row_line(row: dict[str, object]) -> str:
    """One judge and probe in a line: the shift, its interval, the noise and the flag."""
    if row["shift"] is None:
        return f"{row['judge']} {row['probe']}: n {row['n']}, {row['why']}"
    flag = "FLAGGED" if row["flagged"] else "not flagged"
    return (
        f"{row['judge']} {row['probe']}: n {row['n']}, shift {row['shift']:+.2f} points "
        f"({row['share']:+.1%} of the scale) [{row['low']:+.2f}, {row['high']:+.2f}], "
        f"noise {row['noise']:.1%}: {flag} ({row['why']})"
    )


def add_judge_commands(app: typer.Typer) -> None:
    """Add `gramagents judge-check` to the command line's app, once."""
    if "judge-check" not in {c.name for c in app.registered_commands}:
        app.command(name="judge-check")(judge_check)
