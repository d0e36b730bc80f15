"""The `gramagents` command: parse, call the library (`gramagents.jobs`), print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from .cli_judges import AllowSelfJudge, JudgeModel, JuryRule, agree, rubric_app
from .cli_options import (
    FORMAT_OPTION,
    SOURCE_LIMIT_OPTION,
    Concurrency,
    Conditioning,
    ExportTo,
    Limit,
    NoCache,
    OnChange,
    Pairs,
    ResumeChanged,
    RunDir,
    Seed,
    SourceLimit,
    Switch,
    Threads,
)
from .cli_profile import profile
from .cli_runtime import (
    add_commands,
    apply_threads,
    command_line,
    fail,
    format_help,
    limit_help,
    may_name_a_recipe_command,
    progress,
    run_job,
    say,
    standalone,
)
from .errors import GramagentsError

if TYPE_CHECKING:
    from .results import BuildResult, EvalResult

T = TypeVar("T")

app = typer.Typer(
    name="gramagents",
    help="LLM agents that build grammar benchmarks, and one workflow that evaluates any "
    "model on them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_say = say
_command = command_line


def _call(job: Callable[[], T]) -> T:
    """`job()` (a check before a job starts), a user error printed as one line."""
    try:
        return job()
    except GramagentsError as exc:
        raise fail(exc) from None


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
    from . import jobs

    # before the threads are fitted and the build's libraries load: a slip is told at once
    _call(lambda: jobs.check_build_inputs(recipe, source))
    assert source is not None
    apply_threads(threads)
    result = run_job(
        jobs.abuild(
            recipe,
            source,
            run_dir,
            agents=agents is Switch.on,
            agent_model=agent_model,
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            cache=not no_cache,
            resume_changed=resume_changed.value,
            progress=progress(),
            command=_command(),
        )
    )
    _say_build(result)


def _say_build(result: BuildResult) -> None:
    """How many items the build made, by task, and where they and its report are."""
    tasks = result.manifest.tasks
    made = sum(tasks.values())
    if made:
        _say(f"built {made} items ({', '.join(f'{t} {n}' for t, n in tasks.items())})")
    else:
        _say(
            "built 0 items: nothing passed the recipe's checks (the stages in the report say where)"
        )
    warnings = (result.manifest.artifacts or {}).get("warnings")
    if warnings:
        _say(f"{len(warnings)} warnings, listed in {result.report_path} (its Warnings section)")
    _say(f"dataset: {result.dataset_path}")
    if result.view_path is not None:
        _say(f"view: {result.view_path} (open in a browser)")
    _say(f"report: {result.report_path}")


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
    seed: Annotated[int, typer.Option(help="Seed for sampling.")] = 1234,
    concurrency: Concurrency = 16,
    no_cache: NoCache = False,
    judge: JudgeModel = None,
    jury: JuryRule = "median",
    allow_self_judge: AllowSelfJudge = False,
    conditioning: Conditioning = None,
    pairs: Pairs = "loglik",
    resume_changed: ResumeChanged = OnChange.refuse,
    threads: Threads = None,
) -> None:
    """Evaluate models on a dataset and write per-item records and a report."""
    from . import jobs

    apply_threads(threads)
    result = run_job(
        jobs.aevaluate(
            dataset,
            model or ["smollm2"],
            run_dir,
            format=fmt,
            answers=answers,
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            cache=not no_cache,
            judge_models=judge or (),
            jury=jury,
            allow_self_judge=allow_self_judge,
            conditioning=conditioning,
            pairs=pairs,
            resume_changed=resume_changed.value,
            progress=progress(),
            command=command_line(),
        ),
        graceful=True,
    )
    _say_eval(result)
    if not result.complete:
        raise typer.Exit(1)


def _say_eval(result: EvalResult) -> None:
    """What an eval did (counts, the judge's share) and where its report is."""
    manifest, counts = result.manifest, result.manifest.counts
    judges = len((manifest.judge or {}).get("models") or [1])
    by_judge = (
        f" ({manifest.judge['requests_sent']} by the judge{'s' if judges > 1 else ''})"
        if manifest.judge
        else ""
    )
    _say(
        f"{manifest.status}: {counts.items} answers, {counts.requests_line()}, "
        f"{counts.cache_hits} cache hits, {counts.invalid} invalid, {counts.failed} failed"
        + (f", {counts.not_asked} not asked" if counts.not_asked else "")
        + by_judge
    )
    if result.view_path is not None:
        _say(f"view: {result.view_path} (open in a browser)")
    _say(f"report: {result.report_path}")


app.command(name="profile")(profile)


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
    from .profiles.compare import compare_runs
    from .report.runs import refresh_report

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


# --- rubric judges: agreement with humans, rubric checks (written in cli_judges) -------------
app.command()(agree)
app.add_typer(rubric_app, name="rubric")


def add_recipe_commands() -> None:
    """Add the subcommands recipes register (e.g. `m2`), once."""
    add_commands(app)


def main() -> None:
    """Console-script entry point."""
    from .cli_judges import add_judge_commands
    from .process import command_process

    add_judge_commands(app)
    if "--help" in sys.argv[1:]:  # only then: listing the formats imports the recipes
        FORMAT_OPTION.help, SOURCE_LIMIT_OPTION.help = format_help(), limit_help()
    if may_name_a_recipe_command(app, sys.argv[1:]):
        add_recipe_commands()
    with command_process():
        code = standalone(app)
    sys.exit(code)


if __name__ == "__main__":
    main()
