"""The command line of judges: the jury's options of `eval` and `profile`."""

from __future__ import annotations

from typing import Annotated

import typer

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
