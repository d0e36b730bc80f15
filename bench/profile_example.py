"""`gramagents profile` on a shipped suite from a fresh clone, with the embedded model, timed.

Clones the repository's committed tree into a temporary folder, and runs there, in a fresh
process with an empty response cache, exactly the command the README shows:

    gramagents profile --suite SUITE --model smollm2

It prints the wall time against the target, each entry's items, and each competence's
chance-corrected score with its interval, and checks that the profile names every competence
of the suite.

    python bench/profile_example.py [--suite zh-pedagogy] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 900.0


def main() -> None:
    """Clone, profile, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="zh-pedagogy")
    parser.add_argument("--limit", type=int, default=None, help="profile --limit N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        command = ["profile", "--suite", args.suite, "--model", "smollm2"]
        command += ["--run-dir", str(Path(scratch) / "profile")]
        if args.limit is not None:
            command += ["--limit", str(args.limit)]
        env = {
            **os.environ,
            "GRAMAGENTS_CACHE": str(Path(scratch) / "cache.sqlite"),
            "PYTHONPATH": str(clone / "src"),
        }
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "gramagents", *command],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"profile failed:\n{done.stderr[-2000:]}")
        _print(Path(scratch) / "profile", args.suite, seconds)


def _print(folder: Path, suite: str, seconds: float) -> None:
    data = json.loads((folder / "profile.json").read_text(encoding="utf-8"))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    print(f"gramagents profile --suite {suite} --model smollm2 (fresh clone, empty cache)")
    print(
        f"wall time {seconds:.1f} s (target < {TARGET_S:.0f} s): "
        f"{'pass' if seconds < TARGET_S else 'fail'}"
    )
    for name, entry in manifest["entries"].items():
        print(f"  {name}: {sum(entry['tasks'].values())} items, {entry['status']}")
    named = list(data["suite"]["competences"])
    for model, blocks in data["competences"].items():
        for competence in named:
            block = blocks.get(competence)
            if block is None:
                print(f"  {model} {competence}: no items")
                continue
            c = block["corrected"]
            low, high = c["low"], c["high"]
            shown = f"[{low:.3f}, {high:.3f}]" if low is not None else ""
            print(f"  {model} {competence}: {c['value']:.3f} {shown} ({block['n']} items)")
        missing = [c for c in named if blocks.get(c) is None]
        print(f"  every competence of the suite profiled: {'yes' if not missing else missing}")


if __name__ == "__main__":
    main()
