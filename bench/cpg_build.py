"""Assembling every CPG bank for a 739-point table with 9 sentences each, without agents.

The table is synthetic (gramagents.testing.tables): 739 points in categories of 1 to 56
points, 9 sentences each (6,651 sentences), every third point with 10 confusing instances.
The build is timed twice: with an empty cache and again with it filled (with the recipe's
`tfidf-char` similarity nothing is cached; with `minilm` the second build reuses the 739
embeddings). SINGLE-F and BATCH-F ask every point against each other point of its category
(`group-pairs`), so the 56-point categories give most of their questions.

    python bench/cpg_build.py [--points 739]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TARGET_S = 30.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=739)
    args = parser.parse_args()

    from gramagents.testing.tables import write_synthetic_table
    from gramagents.workflow.build import BuildOptions, run_build

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-cpg-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    table = write_synthetic_table(work / "table.jsonl", points=args.points)

    timings = []
    for name in ("first", "again"):
        started = time.perf_counter()
        result = asyncio.run(
            run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / name))
        )
        timings.append(time.perf_counter() - started)
    counts = Counter(item.task for item in result.items)
    print(
        f"table: {args.points} points, {sum(1 for _ in table.open())} lines; "
        f"{len(result.items)} items: " + ", ".join(f"{t} {n}" for t, n in counts.items())
    )
    print(
        f"build, empty cache: {timings[0]:.2f} s (point similarity included); again, cache "
        f"filled: {timings[1]:.2f} s"
    )
    ok = timings[0] < TARGET_S
    print(
        f"RESULT cpg_build_739 {timings[0]:.1f} s target < {TARGET_S:g} {'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
