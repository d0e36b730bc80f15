"""How fast the run viewer renders a large run, how big its files get, and its memory.

A 40,000-item eval (CPG banks from a synthetic 1,040-point table, all eight tasks) is run with
two zero-latency scripted models (the eval writes no viewer: `EvalOptions(view=False)`), and
then `gramagents view RUN` renders its site in a fresh process, as a user runs it: the time
of the render alone and of the whole command (interpreter start and imports included), the
largest file of the site and the process's peak memory. The same is done for a run of the
first quarter of the items: a peak memory that does not grow with the items is what streaming
the records buys. With Chromium installed (Debian's `chromium`, driven by Playwright), the
page is opened too: the time until the first page of items shows and until a filter over all
40,000 items has redrawn the rows.

    python bench/view.py [--items 40000] [--models 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 10.0
TARGET_MB = 20.0

RENDER = """
import json, re, sys, time
from pathlib import Path
started = time.perf_counter()
from gramagents.report.view import write_view
imported = time.perf_counter()
cpu = time.process_time()
result = write_view([Path(sys.argv[1])])
done = time.perf_counter()
cpu = time.process_time() - cpu
status = Path("/proc/self/status").read_text()  # VmHWM: this process's peak, not its parent's
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024
print(json.dumps({"import_s": imported - started, "render_s": done - imported, "cpu_s": cpu,
    "largest": result.largest, "files": result.files, "items": result.items, "peak_mb": peak}))
"""


def answer_a(request) -> str:
    text = request.messages[-1].content
    return ["T", "F", "A", "1064", "I am not sure"][len(text) % 5]


def answer_b(request) -> str:
    return "T"


def make_runs(work: Path, items: int, models: int) -> tuple[Path, Path]:
    from gramagents.models.scripted import ScriptedBackend
    from gramagents.testing.tables import write_synthetic_table
    from gramagents.workflow.build import BuildOptions, run_build
    from gramagents.workflow.eval import EvalOptions, run_eval

    ScriptedBackend.register("view-a", answer_a)
    ScriptedBackend.register("view-b", answer_b)
    table = write_synthetic_table(work / "table.jsonl", points=1040)
    built = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / "data"))
    ).dataset_path
    lines = built.read_text(encoding="utf-8").splitlines()
    specs = ["scripted:view-a", "scripted:view-b"][:models]
    runs = []
    for name, count in (("large", items), ("quarter", items // 4)):
        dataset = work / name / "dataset.jsonl"
        dataset.parent.mkdir()
        dataset.write_text("\n".join(lines[:count]) + "\n", encoding="utf-8")
        options = EvalOptions(
            models=specs, run_dir=work / f"eval-{name}", use_cache=False, view=False
        )
        asyncio.run(run_eval(dataset, options))
        runs.append(work / f"eval-{name}")
    return runs[0], runs[1]


def render(run: Path) -> dict:
    """Render the site in a fresh interpreter; its figures and the wall time of the process."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", RENDER, str(run)], capture_output=True, text=True, check=True
    ).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    figures["process_s"] = time.perf_counter() - started
    largest = max(p.stat().st_size for p in run.rglob("*") if p.is_file() and _site(run, p))
    assert largest == figures["largest"], (largest, figures["largest"])
    return figures


def _site(run: Path, path: Path) -> bool:
    return path == run / "report.html" or (run / "view") in path.parents


def browse(page_path: Path, n: int) -> dict | None:
    """Seconds until the items show and until a filter over every item has redrawn them."""
    executable = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if executable is None:
        return None
    flags = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=flags)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        page.goto(page_path.as_uri() + "#items")
        page.wait_for_selector("table.rows tbody tr", timeout=60_000)
        opened = time.perf_counter() - started
        shown = page.locator(".count").inner_text()
        started = time.perf_counter()
        page.select_option('select[data-filter="outcome"]', "w")
        page.wait_for_function(
            "n => !document.querySelector('.count').textContent.endsWith(n)", arg=shown
        )
        filtered = time.perf_counter() - started
        result = {
            "open_s": opened,
            "filter_s": filtered,
            "after": page.locator(".count").inner_text(),
        }
        browser.close()
    assert shown.startswith(f"{n:,} of"), shown
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--models", type=int, default=2, choices=(1, 2))
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-view-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    large, quarter = make_runs(work, args.items, args.models)
    render(quarter)  # the charting script is bundled once per machine: not this bench's figure
    small = render(quarter)
    big = render(large)
    n = next(iter(big["items"].values()))
    print(f"{n:,} items, {args.models} model(s): site of {big['files']} files")
    print(
        f"render {big['render_s']:.2f} s ({big['cpu_s']:.2f} s of CPU; imports "
        f"{big['import_s']:.2f} s, whole command {big['process_s']:.2f} s); largest file "
        f"{big['largest'] / 1e6:.2f} MB"
    )
    print(
        f"peak memory: {small['peak_mb']:.0f} MB for {n // 4:,} items, {big['peak_mb']:.0f} MB "
        f"for {n:,} (render {small['render_s']:.2f} s and {big['render_s']:.2f} s; CPU "
        f"{small['cpu_s']:.2f} s and {big['cpu_s']:.2f} s)"
    )
    browsed = browse(large / "report.html", n)
    if browsed is None:
        print("browser: skipped (needs Debian's chromium and the playwright package)")
    else:
        print(
            f"browser: first page of items after {browsed['open_s']:.2f} s; a filter over all "
            f"{n:,} items redrawn in {browsed['filter_s'] * 1000:.0f} ms ({browsed['after']})"
        )
    seconds, megabytes = big["render_s"], big["largest"] / 1e6
    ok = seconds < TARGET_S and megabytes < TARGET_MB
    print(
        f"RESULT view_render {seconds:.2f} s target < {TARGET_S:g}; largest file "
        f"{megabytes:.2f} MB target < {TARGET_MB:g} {'pass' if ok else 'fail'}"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
