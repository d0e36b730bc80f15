"""The `gramagents` command: parse, call the library (`gramagents.jobs`), print."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console

from .cli_options import (
    FORMAT_OPTION,
    SOURCE_LIMIT_OPTION,
    Concurrency,
    Conditioning,
    ExportTo,
    JudgeModel,
    Limit,
    NoCache,
    OnChange,
    ResumeChanged,
    RunDir,
    Seed,
    SourceLimit,
    Switch,
    Threads,
)
from .cli_runtime import (
    add_commands,
    apply_threads,
    fail,
    format_help,
    limit_help,
    may_name_a_recipe_command,
    standalone,
)
from .errors import GramagentsError
from .redact import redact

if TYPE_CHECKING:
    from .results import BuildResult, EvalResult, ProfileResult

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


def _command() -> list[str]:
    """The command line as runs record it: credentials in it masked."""
    return [redact(arg) for arg in sys.argv]


def _say(text: str) -> None:
    out.print(text, soft_wrap=True, markup=False, highlight=False)


def _call(job: Callable[[], T]) -> T:
    """`job()`, a user error printed as one line, an interrupt as the line that says resume."""
    try:
        return job()
    except GramagentsError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt:
        print("interrupted; re-run the same command to resume", file=sys.stderr)
        raise typer.Exit(130) from None


def _progress() -> object:
    from .progress import display

    return display(err)


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
    result = _call(
        lambda: jobs.build(
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
            progress=_progress(),  # type: ignore[arg-type]
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
    judge: JudgeModel = "smollm2",
    conditioning: Conditioning = None,
    resume_changed: ResumeChanged = OnChange.refuse,
    threads: Threads = None,
) -> None:
    """Evaluate models on a dataset and write per-item records and a report."""
    from . import jobs

    apply_threads(threads)
    result = _call(
        lambda: jobs.evaluate(
            dataset,
            model or ["smollm2"],
            run_dir,
            format=fmt,
            answers=answers,
            limit=limit,
            seed=seed,
            concurrency=concurrency,
            cache=not no_cache,
            judge_models=[judge],
            conditioning=conditioning,
            resume_changed=resume_changed.value,
            progress=_progress(),  # type: ignore[arg-type]
            command=_command(),
        )
    )
    _say_eval(result)
    if not result.complete:
        raise typer.Exit(1)


def _say_eval(result: EvalResult) -> None:
    """What an eval did (counts, the judge's share) and where its report is."""
    manifest, counts = result.manifest, result.manifest.counts
    by_judge = f" ({manifest.judge['requests_sent']} by the judge)" if manifest.judge else ""
    _say(
        f"{manifest.status}: {counts.items} answers, {counts.requests_sent} requests sent, "
        f"{counts.cache_hits} cache hits, {counts.invalid} invalid, {counts.failed} failed"
        + by_judge
    )
    if result.view_path is not None:
        _say(f"view: {result.view_path} (open in a browser)")
    _say(f"report: {result.report_path}")


def _sources(given: list[str] | None) -> dict[str, Path]:
    """`ENTRY=PATH` options as a mapping."""
    sources: dict[str, Path] = {}
    for value in given or []:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise fail(GramagentsError(f"--source {value}: expected ENTRY=PATH"))
        sources[name] = Path(path)
    return sources


@app.command()
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
    judge: Annotated[str, typer.Option(help="Model spec of the rubric judge.")] = "smollm2",
    concurrency: Concurrency = 16,
    no_cache: NoCache = False,
    threads: Threads = None,
) -> None:
    """A model's grammar competence across every method of a suite, with paired comparisons."""
    from . import jobs

    apply_threads(threads)
    result = _call(
        lambda: jobs.profile(
            suite,
            model or ["smollm2"],
            run_dir,
            sources=_sources(source),
            limit=limit,
            seed=seed,
            boot=boot,
            agent_model=agent_model,
            judge_models=[judge],
            concurrency=concurrency,
            cache=not no_cache,
            progress=_progress(),  # type: ignore[arg-type]
            command=_command(),
        )
    )
    _say_profile(result)
    if not result.complete:
        raise typer.Exit(1)


def _say_profile(result: ProfileResult) -> None:
    """Each model's chance-corrected competences, and where the profile is."""
    for model_name, blocks in result.data.get("competences", {}).items():
        shown = ", ".join(
            f"{c} {b['corrected']['value']:.2f}" if b else f"{c} —" for c, b in blocks.items()
        )
        _say(f"{model_name}: {shown}")
    _say(f"{result.manifest.status}: profile {result.path / 'profile.json'}")
    if result.view_path is not None:
        _say(f"view: {result.view_path} (open in a browser)")
    _say(f"report: {result.report_path}")


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

    if "--help" in sys.argv[1:]:  # only then: listing the formats imports the recipes
        FORMAT_OPTION.help, SOURCE_LIMIT_OPTION.help = format_help(), limit_help()
    if may_name_a_recipe_command(app, sys.argv[1:]):
        add_recipe_commands()
    with command_process():
        code = standalone(app)
    sys.exit(code)


if __name__ == "__main__":
    main()
