"""Write the viewer's site: `report.html` and the `view/` folder beside it.

```
OUT/report.html          the page: overview tables and charts, the item browser, build tables
OUT/view/app.js          the page's script; style.css its look; vega.js the charting library
OUT/view/data/runN/...   per run: items/index.js, items/rows-K.js, items/detail-K.js, and the
                         record tables of a build (review/, rejected/, failures/)
```

Everything is written into a staging folder first and moved into place at the end, so a
failure leaves the previous site as it was. `view/site.json` marks a site as written here.
The site goes only into a new or empty folder, one holding a site written here (the mark),
or the run folder it shows (which has no `report.html` or `view/` of another's); any other
`--out` folder is refused unless `force` says to replace its `report.html` and `view/`. A run
folder written into is held (locked) meanwhile, as the runs shown are.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from ...errors import RunError
from ...extras import require
from ...records import Item, RunManifest
from ...runtime.run import MANIFEST, describe_failure
from ...runtime.run import Run as HeldRun
from ...runtime.rundir import temporary_folder, write_atomic
from ..summary import Summary, SummaryBuilder
from .build_page import build_overview, write_failures, write_rejected, write_review
from .eval_page import EvalRun, comparison, eval_overview
from .items import OUTCOMES, Presenter, write_build_items, write_eval_items
from .join import RecordStore, joined_items
from .markup import Figures, inline_json
from .plots import write_bundle
from .profile_page import profile_overview
from .shards import ShardWriter

ASSETS = ("app.js", "style.css")
log = logging.getLogger("gramagents.view")


@dataclass
class Run:
    """A run folder to show."""

    key: str
    path: Path
    manifest: RunManifest
    summary: Summary | None = None
    sections: dict[str, list[str]] | None = None
    """The lines of its sections that write files, when the report just ran them."""
    items: list[Item] | None = None
    """An eval's items in scope, when the eval that just ran them hands them over."""


@dataclass
class SiteResult:
    """What was written."""

    page: Path
    folder: Path
    largest: int = 0
    """Bytes of the largest file of the site."""
    files: int = 0
    items: dict[str, int] = field(default_factory=dict)
    """Run id to the number of items its browser holds."""


def default_out(runs: list[Path]) -> Path:
    """One run: its own folder; several: a new folder beside the first."""
    if len(runs) == 1:
        return runs[0]
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return runs[0].resolve().parent / f"view-{stamp}"


def write_view(
    paths: list[Path],
    out: Path | None = None,
    summary: Summary | None = None,
    sections: dict[str, list[str]] | None = None,
    force: bool = False,
    items: list[Item] | None = None,
) -> SiteResult:
    """Write the site of one or more runs into `out` (default: see `default_out`).

    `summary` is the first run's summary, and `sections` the lines of its sections that write
    files, when the caller has them at hand (an eval at its end, from `write_eval_report`);
    `items` the first run's items in scope, when every record of the run is of one of them
    (the dataset is then not read again).

    Raises:
        RunError: `out` is a file, or a folder with files of its own (see `check_out`) and
            `force` is not set; a run shown or written into is held by another command.
    """
    require("viewer", "the run viewer")
    out = Path(out) if out is not None else None
    if out is not None:  # before any run is held (a refusal leaves every folder as it was)
        check_out(out, force, [Path(p) for p in paths])
    with ExitStack() as stack:  # each run held (locked, or borrowed from its writer) meanwhile
        held = [stack.enter_context(HeldRun.existing(Path(p))) for p in paths]
        runs = [Run(f"run{i}", h.path, h.found) for i, h in enumerate(held) if h.found]
        if summary is not None and runs[0].manifest.kind == "eval":
            runs[0].summary, runs[0].sections = summary, sections
        if runs[0].manifest.kind == "eval":
            runs[0].items = items
        if out is None:
            out = default_out([r.path for r in runs])
            check_out(out, force, [r.path for r in runs])
        if (out / MANIFEST).is_file():  # a run folder: its owner's, as long as this writes
            stack.enter_context(HeldRun.existing(out))
        out.mkdir(parents=True, exist_ok=True)
        staging = temporary_folder(out, ".view-")
        try:
            result, page = _write(runs, out, staging)
            _swap(staging, out / "view")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        write_atomic(result.page, page)  # last: the page the new data belongs to
    return result


MARKER = "site.json"
"""`view/site.json`: the mark of a site this module wrote."""
_MARK = {"written_by": "gramagents view"}
_FOOTER = "Written by <code>gramagents view</code>."


def refresh_view(run: Path, **given: Any) -> SiteResult | None:
    """`write_view` of one run into its own folder, for a command whose job is not the viewer.

    A build, an eval, a review or a report ends with its records and manifest written; a
    viewer that cannot be written then (a file it cannot read, a folder it may not replace) is
    a warning, leaving the run as the command made it and the previous site as it was.
    """
    try:
        return write_view([run], **given)
    except Exception as exc:  # noqa: BLE001 - whatever stops the viewer, the run stands
        log.warning(
            "%s: report.html not written (%s); `gramagents view %s` tries again",
            run,
            describe_failure(exc),
            run,
        )
        return None


def check_out(out: Path, force: bool = False, runs: list[Path] | None = None) -> None:
    """Refuse to write into `out` when that would replace what gramagents view did not write.

    Fine: a new or empty folder, a folder holding a site written here (`view/site.json`), and
    the folder of a run shown (`runs`) when it holds no `report.html` or `view/` yet. Any other
    folder (one with a `manifest.json` of any kind included) only with `force`; a file or a
    symbolic link never.
    """
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        linked = " (a symbolic link)" if out.is_symlink() else ""
        raise RunError(f"--out {out}: not a folder{linked}")
    if not out.exists() or force or _ours(out) or _fresh_run(out, runs or []):
        return
    found = sorted(p.name for p in out.iterdir())
    if not found:
        return
    listed = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    raise RunError(
        f"--out {out}: holds files gramagents view did not write ({listed}); give a new or "
        "empty folder, or --force to replace its report.html and view/"
    )


def _ours(out: Path) -> bool:
    """Whether `out` holds a site this module wrote: its mark, a file of its own."""
    view = out / "view"
    if view.is_symlink() or not view.is_dir():
        return False
    mark = view / MARKER
    try:
        if not mark.is_symlink() and json.loads(mark.read_bytes()) == _MARK:
            return True
    except (OSError, ValueError):
        pass
    page = out / "report.html"
    try:  # a site written before the mark existed: its page's footer says so
        return (
            not page.is_symlink()
            and (view / "app.js").is_file()
            and _FOOTER in page.read_text("utf-8")
        )
    except (OSError, UnicodeDecodeError):
        return False


def _fresh_run(out: Path, runs: list[Path]) -> bool:
    """Whether `out` is the folder of a run shown, with no site of anyone's in it yet."""
    if not any(out.resolve() == run.resolve() for run in runs):
        return False
    return not any(os.path.lexists(out / name) for name in ("report.html", "view"))


def _swap(staging: Path, final: Path) -> None:
    old = final.with_name(f".{final.name}-old-{staging.name.rsplit('-', 1)[-1]}")
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _write(runs: list[Run], out: Path, staging: Path) -> tuple[SiteResult, str]:
    """Write the site's files into `staging`; what was written, and the page's text."""
    package = resources.files("gramagents.report.view") / "assets"
    sizes = [write_bundle(staging)]
    (staging / MARKER).write_text(json.dumps(_MARK) + "\n", encoding="utf-8")
    for name in ASSETS:
        data = (package / name).read_bytes()
        (staging / name).write_bytes(data)
        sizes.append(len(data))
    figures = Figures()
    config: list[dict[str, Any]] = []
    bodies: list[str] = []
    result = SiteResult(page=out / "report.html", folder=out / "view")
    for run in runs:
        data = staging / "data" / run.key
        if run.manifest.kind == "eval":
            entry = _eval_data(run, data)
            bodies.append(eval_overview(_as_eval(run), figures))
        elif run.manifest.kind == "profile":
            entry = _profile_data(run, data)
            bodies.append(profile_overview(run.path, run.manifest, figures))
        else:
            entry = _build_data(run, data)
            bodies.append(build_overview(run.path, run.manifest, figures))
        config.append(entry)
        result.items[run.manifest.run_id] = entry["items"]["n"]
        sizes += [entry["items"]["largest"], *(t["largest"] for t in entry["tables"])]
    evals = [_as_eval(r) for r in runs if r.manifest.kind == "eval"]
    compared = comparison(evals, figures) if len(evals) > 1 else ""
    page = render_page(runs, bodies, compared, config)
    result.largest = max([*sizes, len(page.encode("utf-8"))])
    result.files = sum(1 for p in staging.rglob("*") if p.is_file()) + 1
    return result, page


def _as_eval(run: Run) -> EvalRun:
    assert run.summary is not None
    return EvalRun(run.key, run.path, run.manifest, run.summary, run.sections)


def _eval_data(run: Run, data: Path) -> dict[str, Any]:
    manifest = run.manifest
    with tempfile.TemporaryDirectory(prefix="gramagents-view-") as tmp:
        store = RecordStore(Path(tmp) / "records.sqlite", manifest.models)
        try:
            store.load(run.path)
            models = store.models
            presenter = Presenter(models)
            flags = [f"m{i}" for i in range(len(models))] + ["disagree"]
            writer = ShardWriter(
                data / "items",
                f"{run.key}/items",
                presenter.facet_names(manifest.tasks),
                flags,
                ids=True,
            )
            items, problem = joined_items(manifest, store, run.items)
            builder = SummaryBuilder() if run.summary is None else None
            write_eval_items(writer, presenter, items, builder)
            if builder is not None:  # the same records, counted as they went by
                run.summary = builder.summary()
        finally:
            store.close()
    writer.close({"models": models, "outcomes": OUTCOMES, "problem": problem})
    return _entry(run, writer, models, [])


def _profile_data(run: Run, data: Path) -> dict[str, Any]:
    """A profile has no items of its own: its evals' viewers show them."""
    writer = ShardWriter(data / "items", f"{run.key}/items", [])
    writer.close({"models": [], "outcomes": OUTCOMES, "problem": None})
    return _entry(run, writer, [], [])


def _build_data(run: Run, data: Path) -> dict[str, Any]:
    presenter = Presenter([])
    writer = ShardWriter(
        data / "items", f"{run.key}/items", presenter.facet_names(run.manifest.tasks), ids=True
    )
    write_build_items(writer, presenter, run.path / "dataset.jsonl")
    writer.close({"models": [], "outcomes": OUTCOMES, "problem": None})
    tables = [
        t
        for t in (
            write_review(run.path, run.manifest, data),
            write_rejected(run.path, data),
            write_failures(run.path, data),
        )
        if t is not None
    ]
    return _entry(run, writer, [], tables)


def _entry(
    run: Run, writer: ShardWriter, models: list[str], tables: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "key": run.key,
        "run": run.manifest.run_id,
        "kind": run.manifest.kind,
        "models": models,
        "items": {"key": writer.key, "n": writer.count, "largest": writer.largest},
        "tables": tables,
    }


def render_page(
    runs: list[Run], bodies: list[str], compared: str, config: list[dict[str, Any]]
) -> str:
    """The whole `report.html`."""
    title = runs[0].manifest.run_id if len(runs) == 1 else f"{len(runs)} runs"
    kinds = sorted({r.manifest.kind for r in runs})
    tabs = [("overview", "Overview"), ("items", "Items")]
    tables = {t["table"]: t["title"].split(" (")[0] for c in config for t in c["tables"]}
    tabs += list(tables.items())
    nav = "".join(f'<a href="#{k}" data-tab="{k}">{escape(v)}</a>' for k, v in tabs)
    sections = []
    for run, body in zip(runs, bodies, strict=True):
        heading = (
            f'<h2 class="run-title">{escape(run.manifest.run_id)} '
            f'<span class="kind">{escape(run.manifest.kind)}</span></h2>'
            if len(runs) > 1
            else ""
        )
        sections.append(f'<div class="run" id="{run.key}">{heading}{body}</div>')
    panes = "".join(
        f'<section class="tab" id="tab-{k}" hidden><div class="browser" data-table="{k}"></div>'
        "</section>"
        for k, _ in tabs[1:]
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · gramagents</title>"
        '<link rel="stylesheet" href="view/style.css"></head><body>'
        '<header class="top"><div class="brand">gramagents</div>'
        f'<h1>{escape(title)}</h1><span class="kind">{escape(" + ".join(kinds))}</span>'
        f'<nav class="tabs">{nav}</nav></header><main>'
        f'<section class="tab" id="tab-overview">{compared}{"".join(sections)}</section>'
        f"{panes}</main>"
        f"<footer>{_FOOTER} The tables in <code>report.md"
        "</code> hold the same numbers.</footer>"
        f'<script id="gv-config" type="application/json">{inline_json(config)}</script>'
        '<script src="view/vega.js"></script><script src="view/app.js"></script>'
        "</body></html>\n"
    )
