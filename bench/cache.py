"""How much the response cache saves: the same eval run twice, the second time from the cache.

Builds the example CPG banks (no agents), evaluates the embedded model once with an empty
cache (model loading included) and once more into a new run folder with the cache filled, and
prints both wall times and their ratio (library calls, timed in one process). The same is then
done through the command line, each run a fresh interpreter (imports included): the first
run, the same command again (same `--run-dir`: nothing is asked), and a new run folder
answered from the cache. Scores of the first and cached runs must be identical.

Last, the large case: 40,000 items (CPG banks from a synthetic 1,040-point table) answered by
a zero-latency scripted model, evaluated once to fill the cache and twice more from it: as a
library call, which leaves the garbage collector as the caller set it, and with the collector
settings the `gramagents` command uses (`runtime/memory.py`: no automatic collections while
records are made in bulk). The command's items/s is the result (reading the dataset,
rendering, cache lookups, extraction, scoring and writing every record included; the viewer,
`report.html`, is left out: `bench/view.py` measures it); the library call's is printed
beside it (on 40,000 items the collector's walks take about half its time).

    python bench/cache.py [--model smollm2] [--limit N] [--items 40000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 20.0
TARGET_ITEMS_PER_S = 5000.0


def scores(run: Path) -> list[str]:
    return sorted((run / "scores.jsonl").read_text(encoding="utf-8").splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--limit", type=int, default=None, help="items per task")
    parser.add_argument("--items", type=int, default=40_000, help="items in the large case")
    args = parser.parse_args()

    from gramagents.workflow.build import BuildOptions, run_build
    from gramagents.workflow.eval import EvalOptions, run_eval

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-cache-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    table = ROOT / "examples" / "cpg" / "grammar-points.jsonl"
    dataset = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / "data"))
    ).dataset_path

    def evaluate(run_dir: Path) -> tuple[float, object]:
        started = time.perf_counter()
        result = asyncio.run(
            run_eval(
                dataset,
                EvalOptions(models=[args.model], run_dir=run_dir, limit=args.limit, view=False),
            )
        )
        return time.perf_counter() - started, result.manifest.counts

    first_s, first = evaluate(work / "first")
    cached_s, cached = evaluate(work / "cached")
    same = scores(work / "first") == scores(work / "cached")
    print(f"items: {first.items}  model: {args.model}")
    print(f"first run:  {first_s:8.2f} s  ({first.requests_sent} requests sent)")
    print(
        f"cached run: {cached_s:8.2f} s  ({cached.requests_sent} requests sent, "
        f"{cached.cache_hits} cache hits)"
    )
    print(f"scores identical: {same}")

    cli = [sys.executable, "-m", "gramagents", "eval", str(dataset), "--model", args.model]
    if args.limit:
        cli += ["--limit", str(args.limit)]
    env = {**os.environ, "GRAMAGENTS_CACHE": str(work / "cli-cache.sqlite")}

    def command(run_dir: str) -> float:
        started = time.perf_counter()
        subprocess.run(
            [*cli, "--run-dir", str(work / run_dir)], env=env, check=True, capture_output=True
        )
        return time.perf_counter() - started

    cli_first = command("cli")
    cli_again = command("cli")  # the same command again: same --run-dir
    cli_cached = command("cli-new")  # a new run folder, answered from the cache
    print(
        f"command line: first {cli_first:.2f} s; same command again {cli_again:.2f} s "
        f"(ratio {cli_first / cli_again:.1f}); new run folder from the cache "
        f"{cli_cached:.2f} s (ratio {cli_first / cli_cached:.1f}); each includes the "
        "interpreter start and imports"
    )

    ratio = first_s / cached_s
    small_ok = same and cached.requests_sent == 0 and ratio >= TARGET
    print(
        f"cached/first ratio {ratio:.1f} x (target >= {TARGET:g}: {'pass' if small_ok else 'fail'})"
    )

    rate, large_ok = large_case(work, args.items)
    ok = small_ok and large_ok
    print(
        f"RESULT cache_rerun {rate:.0f} items/s target >= {TARGET_ITEMS_PER_S:g} "
        f"{'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


def large_case(work: Path, count: int) -> tuple[float, bool]:
    """Items/s of a `count`-item eval served from the cache, and whether its scores held."""
    from gramagents.models.scripted import ScriptedBackend
    from gramagents.runtime.memory import tuned_collector
    from gramagents.testing.tables import write_synthetic_table
    from gramagents.workflow.build import BuildOptions, run_build
    from gramagents.workflow.eval import EvalOptions, run_eval

    ScriptedBackend.register("bench-cache", lambda request: "T")
    os.environ["GRAMAGENTS_CACHE"] = str(work / "large-cache.sqlite")
    table = write_synthetic_table(work / "large-table.jsonl", points=1040)
    built = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / "large-data"))
    ).dataset_path
    lines = built.read_text(encoding="utf-8").splitlines()[:count]
    dataset = work / "large" / "dataset.jsonl"
    dataset.parent.mkdir()
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def evaluate(name: str) -> tuple[float, object]:
        # the viewer is reporting, not answering: bench/view.py measures it
        options = EvalOptions(models=["scripted:bench-cache"], run_dir=work / name, view=False)
        started = time.perf_counter()
        result = asyncio.run(run_eval(dataset, options))
        return time.perf_counter() - started, result.manifest.counts

    first_s, first = evaluate("large-first")
    library_s, library = evaluate("large-cached")
    with tuned_collector():  # as the `gramagents` command runs every command
        cached_s, cached = evaluate("large-cached-command")
    same = (
        scores(work / "large-first")
        == scores(work / "large-cached")
        == scores(work / "large-cached-command")
    )
    rate = len(lines) / cached_s
    print(
        f"{len(lines)} items, scripted model: first run {first_s:.2f} s "
        f"({first.requests_sent} requests); cached, as a library call (the caller's garbage "
        f"collector) {library_s:.2f} s = {len(lines) / library_s:.0f} items/s; cached, with "
        f"the command's collector settings {cached_s:.2f} s ({cached.cache_hits} cache hits, "
        f"{cached.requests_sent + library.requests_sent} requests sent) = {rate:.0f} items/s; "
        f"scores identical: {same}"
    )
    return rate, same and cached.requests_sent == 0 and rate >= TARGET_ITEMS_PER_S


if __name__ == "__main__":
    sys.exit(main())
