"""The `gramagents` command: parse, call the library, print."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from .cli_runtime import (
    add_commands,
    apply_threads,
    fail,
    format_help,
    limit_help,
    may_name_a_recipe_command,
    progress_display,
    standalone,
)
from .errors import GramagentsError
from .redact import redact

if TYPE_CHECKING:
    from .workflow.eval import EvalResult

T = TypeVar("T")

app = typer.Typer(
    name="gramagents",
    help="LLM agents that build grammar benchmarks, and one workflow that evaluates any "
    "model on them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)


class Switch(str, Enum):
    """on/off option values."""

    on = "on"
    off = "off"


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
SourceLimit = Annotated[int | None, SOURCE_LIMIT_OPTION]
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


JudgeModel = Annotated[
    str,
    typer.Option(
        "--judge-model",
        "--judge",
        help="Model spec of the rubric judge for open-ended tasks (any backend; best a capable "
        "model other than the one under test: the embedded default is a smoke test, not a judge).",
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


class OnChange(str, Enum):
    """What a resume does when inputs changed since its records were made."""

    refuse = "refuse"
    reask = "reask"


ResumeChanged = Annotated[
    OnChange,
    typer.Option(
        "--resume-changed",
        help="When --run-dir's records were made under other inputs (a prompt template, "
        "rubric, recipe, source, conditioning or model endpoint since changed): refuse, or "
        "reask (set those records aside, ask them again, and record both hashes).",
    ),
]


def _command() -> list[str]:
    """The command line as runs record it: credentials in it masked."""
    return [redact(arg) for arg in sys.argv]


def _say(text: str) -> None:
    out.print(text, soft_wrap=True, markup=False, highlight=False)


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(coroutine)
    except GramagentsError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt:
        print("interrupted; re-run the same command to resume", file=sys.stderr)
        raise typer.Exit(130) from None


def _build_source(recipe: str, source: Path | None) -> Path:
    """Fail on an unknown recipe or a missing --source before the build's libraries load."""
    from .resources import recipe_path

    try:
        recipe_path(recipe)
    except GramagentsError as exc:
        raise fail(exc) from None
    if source is None:
        raise fail(GramagentsError("build: --source is required (the file or folder it reads)"))
    return source


@app.command()
def build(
    recipe: Annotated[str, typer.Argument(help="Recipe name (cpg) or path (graphs/cpg.yaml).")],
    source: Annotated[
        Path | None,
        typer.Option(
            help="The source the recipe reads: a file or folder (e.g. a grammar-point table). "
            "[required]"
        ),
    ] = None,
    agents: Annotated[
        Switch,
        typer.Option(help="Run the recipe's agents, or assemble banks from the source as it is."),
    ] = Switch.on,
    agent_model: Annotated[
        str | None, typer.Option(help="Model spec for every agent (default: the recipe's).")
    ] = None,
    run_dir: RunDir = None,
    limit: SourceLimit = None,
    seed: Seed = None,
    concurrency: Concurrency = 16,
    no_cache: NoCache = False,
    resume_changed: ResumeChanged = OnChange.refuse,
    threads: Threads = None,
) -> None:
    """Build a dataset: read a grammar source, run the recipe's agents, assemble banks."""
    source = _build_source(recipe, source)
    from .workflow.build import BuildOptions, run_build

    apply_threads(threads)

    options = BuildOptions(
        source=source,
        agents=agents is Switch.on,
        agent_model=agent_model,
        run_dir=run_dir,
        limit=limit,
        seed=seed,
        concurrency=concurrency,
        use_cache=not no_cache,
        command=_command(),
        resume_changed=resume_changed.value,
    )
    result = _run(run_build(recipe, options, progress_display(err)))
    counts = result.manifest.tasks
    if result.items:
        _say(
            f"built {len(result.items)} items ({', '.join(f'{t} {n}' for t, n in counts.items())})"
        )
    else:
        _say(
            "built 0 items: nothing passed the recipe's checks (the stages in the report say where)"
        )
    _say(f"dataset: {result.dataset_path}")
    if result.folder.file("report.html").is_file():
        _say(f"view: {result.folder.file('report.html')} (open in a browser)")
    _say(f"report: {result.folder.file('report.md')}")


FORMAT_OPTION = typer.Option("--format", help="Dataset format (`eval --help` lists them).")
"""Its help is filled from the format registry when help is asked for (`main`)."""


@app.command(name="eval")
def evaluate(
    dataset: Annotated[
        Path,
        typer.Argument(help="A build run folder, a dataset.jsonl or an exported folder."),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="Model spec (repeatable): smollm2, hf:PATH_OR_ID, openai:MODEL[@BASE_URL].",
        ),
    ] = None,
    fmt: Annotated[str, FORMAT_OPTION] = "gramagents",
    answers: Annotated[
        Path | None,
        typer.Option(help="Gold answers (CSV id,answer) for items the dataset has none for."),
    ] = None,
    run_dir: RunDir = None,
    limit: Limit = None,
    seed: Seed = None,
    concurrency: Concurrency = 16,
    no_cache: NoCache = False,
    judge: JudgeModel = "smollm2",
    conditioning: Conditioning = None,
    resume_changed: ResumeChanged = OnChange.refuse,
    threads: Threads = None,
) -> None:
    """Evaluate models on a dataset and write per-item records and a report."""
    from .workflow.eval import EvalOptions, run_eval

    apply_threads(threads)

    options = EvalOptions(
        models=model or ["smollm2"],
        fmt=fmt,
        answers=answers,
        run_dir=run_dir,
        limit=limit,
        seed=seed if seed is not None else 1234,
        concurrency=concurrency,
        use_cache=not no_cache,
        command=_command(),
        judge=judge,
        conditioning=conditioning,
        resume_changed=resume_changed.value,
    )
    result = _run(run_eval(dataset, options, progress_display(err)))
    _say_eval(result)
    if result.manifest.status != "complete":
        raise typer.Exit(1)


def _say_eval(result: EvalResult) -> None:
    """What an eval did (counts, the judge's share) and where its report is."""
    manifest, counts = result.manifest, result.manifest.counts
    by_judge = f" ({manifest.judge['requests_sent']} by the judge)" if manifest.judge else ""
    _say(
        f"{manifest.status}: {counts.items} answers, {counts.requests_line()}, "
        f"{counts.cache_hits} cache hits, {counts.invalid} invalid, {counts.failed} failed"
        + by_judge
    )
    page = result.folder.file("report.html")
    if page.is_file():
        _say(f"view: {page} (open in a browser)")
    _say(f"report: {result.report_path}")


class ExportTo(str, Enum):
    """Formats `gramagents export` writes."""

    parquet = "parquet"
    hf = "hf"


@app.command()
def export(
    run: Annotated[Path, typer.Argument(help="A build run folder.")],
    folder: Annotated[Path, typer.Argument(help="New folder to write.")],
    to: Annotated[
        ExportTo,
        typer.Option("--to", help="parquet (files under data/) or hf (datasets' save_to_disk)."),
    ],
    license: Annotated[
        str | None,
        typer.Option(help="Licence of the items for the card (an SPDX id; default: unknown)."),
    ] = None,
) -> None:
    """Write a built dataset as Parquet or a Hugging Face datasets folder, with its card."""
    from .workflow.export import export_run

    try:
        result = export_run(run, to.value, folder, license)
    except GramagentsError as exc:
        raise fail(exc) from None
    _say(f"exported {result.items} items to {result.folder} ({to.value}, licence {result.license})")
    _say(f"card: {result.folder / 'README.md'}")


@app.command()
def review(
    run: Annotated[Path, typer.Argument(help="A build run folder.")],
    file: Annotated[Path, typer.Argument(help="The reviewed file (review.csv or .jsonl).")],
    reviewer: Annotated[str, typer.Option(help="Name recorded for rows without a reviewer.")] = (
        "reviewer"
    ),
    no_cache: NoCache = False,
) -> None:
    """Apply a reviewer's decisions (accept, reject, edit) to a build and rebuild its banks."""
    from .workflow.build import import_review

    try:
        result = import_review(run, file, reviewer, use_cache=not no_cache)
    except GramagentsError as exc:
        raise fail(exc) from None
    decided = (result.manifest.review or {}).get("decisions", {})
    _say(
        f"applied {', '.join(f'{n} {d}' for d, n in decided.items()) or 'no decisions'}; "
        f"rebuilt {len(result.items)} items"
    )
    _say(f"dataset: {result.dataset_path}")


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run folders.")],
) -> None:
    """Refresh run reports from their records; with several runs, print them side by side."""
    from .report.runs import compare_runs, refresh_report

    try:
        if len(runs) == 1:
            path, _, _ = refresh_report(runs[0])
            _say(path.read_text(encoding="utf-8") if path.exists() else f"{path}: missing")
            _say(f"report: {path}")
        else:
            _say(compare_runs(runs))
    except GramagentsError as exc:
        raise fail(exc) from None


@app.command()
def view(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (eval or build).")],
    out: Annotated[
        Path | None,
        typer.Option(help="Folder for the site (default: the run's own; several runs: a new one)."),
    ] = None,
    serve: Annotated[
        bool, typer.Option("--serve", help="Serve the site on 127.0.0.1 until interrupted.")
    ] = False,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port for --serve (0: any).")] = 0,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Write into an --out folder that holds other files (its "
            "report.html and view/ are replaced).",
        ),
    ] = False,
) -> None:
    """Write a run viewer people can browse: overview, charts, every item and its answers."""
    from .report.view import write_view

    try:
        result = write_view(runs, out, force=force)
    except GramagentsError as exc:
        raise fail(exc) from None
    items = ", ".join(f"{run} {n:,} items" for run, n in result.items.items())
    _say(f"view: {result.page} ({items}; largest file {result.largest / 1e6:.1f} MB)")
    if serve:
        from .report.view.serve import address, make_server

        try:
            server = make_server(result.page.parent, port)
        except OSError as exc:
            raise fail(GramagentsError(f"--port {port}: cannot serve ({exc.strerror})")) from None
        _say(f"serving {address(server, result.page.name)} (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


# --- rubric judges: agreement with humans, rubric checks ---------------------------------------


@app.command()
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
app.add_typer(rubric_app, name="rubric")


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


def add_recipe_commands() -> None:
    """Add the subcommands recipes register (e.g. `m2`), once."""
    add_commands(app)


def main() -> None:
    """Console-script entry point."""
    from .process import command_process
    from .profile.command import add_profile_command  # it builds on this module's options

    add_profile_command(app)
    if "--help" in sys.argv[1:]:  # only then: listing the formats imports the recipes
        FORMAT_OPTION.help, SOURCE_LIMIT_OPTION.help = format_help(), limit_help()
    if may_name_a_recipe_command(app, sys.argv[1:]):
        add_recipe_commands()
    with command_process():
        code = standalone(app)
    sys.exit(code)


if __name__ == "__main__":
    main()
