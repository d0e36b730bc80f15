"""The command line of judges: the jury's options of `eval` and `profile`, and `judge-check`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from .cli_runtime import fail, progress_display
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

_out = Console()
_err = Console(stderr=True)


def _say(text: str) -> None:
    _out.print(text, soft_wrap=True, markup=False, highlight=False)


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
        result = asyncio.run(run_check(run, options, progress_display(_err)))
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
