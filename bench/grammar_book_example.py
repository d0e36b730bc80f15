"""The README's grammar-book commands on the example book, with the embedded model, timed.

Runs, from the repository's root, exactly the two commands the README shows (build with the
example recipe and agents on, then eval), each in a fresh process with an empty response
cache, run folders in a temporary folder; prints the wall time of each against the target,
the time of every build stage (from the lines the build prints as each stage ends), and what
the build kept.

    python bench/grammar_book_example.py [--eval-limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 600.0
BUILD = [
    "build", "examples/grammar-book/grammar-book.yaml",
    "--source", "examples/grammar-book/book.md",
    "--agent-model", "smollm2?max_tokens=32",
]  # fmt: skip
STAGE = re.compile(r"^([\w-]+): (.+) \((\d+) s\)$")


def _run(args: list[str], cache: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "GRAMAGENTS_CACHE": str(cache)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gramagents", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return seconds, done


def main() -> None:
    """Time the build and the eval; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval-limit", type=int, default=None, help="eval --limit N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        build_s, built = _run([*BUILD, "--run-dir", str(folder / "build")], folder / "c.sqlite")
        evaluate = ["eval", str(folder / "build"), "--run-dir", str(folder / "eval")]
        if args.eval_limit is not None:
            evaluate += ["--limit", str(args.eval_limit)]
        eval_s, evaluated = _run(evaluate, folder / "c.sqlite")
        manifest = json.loads((folder / "build" / "manifest.json").read_text())
        answers = json.loads((folder / "eval" / "manifest.json").read_text())["counts"]["items"]
    print("build stages (s, as the build printed them):")
    for line in built.stderr.splitlines():
        found = STAGE.match(line)
        if found:
            print(f"  {found.group(1):<12} {found.group(3):>5}  {found.group(2)}")
    print(f"build: {built.stdout.splitlines()[0]}")
    print(f"backcheck: {manifest.get('artifacts', {}).get('backcheck')}")
    print(f"build {build_s:.1f} s (target < {TARGET_S:.0f} s: "
          f"{'pass' if build_s < TARGET_S else 'FAIL'})")  # fmt: skip
    print(f"eval {eval_s:.1f} s for {answers} answers: {evaluated.stdout.splitlines()[0]}")


if __name__ == "__main__":
    main()
