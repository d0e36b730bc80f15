"""The options several `gramagents` commands share, as typer declares them.

Their names and defaults are those of the Python functions (`gramagents.build`, `evaluate`,
`profile`), which the commands call.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer


class Switch(str, Enum):
    """on/off option values."""

    on = "on"
    off = "off"


class ExportTo(str, Enum):
    """Formats `gramagents export` writes."""

    parquet = "parquet"
    hf = "hf"


class OnChange(str, Enum):
    """What a resume does when inputs changed since its records were made."""

    refuse = "refuse"
    reask = "reask"


RunDir = Annotated[
    Path | None,
    typer.Option("--run-dir", help="Run folder; re-running a command with it resumes the run."),
]
Limit = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Sample N questions per task with --seed (a question: the items that share a "
        "meta.question, else one item), spread over categories and source files.",
    ),
]
SOURCE_LIMIT_OPTION = typer.Option(
    "--limit", min=1, help="Read only the first N units of the source (`build --help` lists them)."
)
"""Its help is filled from the recipes' readers when help is asked for (`cli.main`)."""
SourceLimit = Annotated[int | None, SOURCE_LIMIT_OPTION]
FORMAT_OPTION = typer.Option("--format", help="Dataset format (`eval --help` lists them).")
"""Its help is filled from the format registry when help is asked for (`cli.main`)."""
Seed = Annotated[int | None, typer.Option(help="Seed for sampling and shuffles.")]
Concurrency = Annotated[int, typer.Option(min=1, help="Requests in flight at once (API models).")]
NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the response cache.")
]
Threads = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Threads for local models (default: the CPUs this process may use, less those "
        "other processes keep busy as it starts; OMP_NUM_THREADS when set).",
    ),
]
Conditioning = Annotated[
    str | None,
    typer.Option(
        help="How minimal pairs are scored: spaced (each sentence after a space, as "
        "lm-eval's BLiMP tasks) or bare (as a text begins). Default: the task's own "
        "(BLiMP and GEC-PAIR spaced, CLiMP bare).",
    ),
]
Pairs = Annotated[
    str,
    typer.Option(
        help="How minimal pairs are asked: loglik (their log-probabilities compared) or choice "
        "(which sentence is acceptable, in both orders, for any model; scored as TASK-CHOICE).",
    ),
]
ResumeChanged = Annotated[
    OnChange,
    typer.Option(
        "--resume-changed",
        help="When --run-dir's records were made under other inputs (a prompt template, "
        "rubric, recipe, source, suite, conditioning or model endpoint since changed, or "
        "another --limit or --seed): refuse, or reask (set those records aside, ask again "
        "what this run asks, and record the change).",
    ),
]
