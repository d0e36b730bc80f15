"""Memory of an eval with `--limit` against the size of its dataset: flat, not growing.

Writes two JSONL datasets of the same kind of items (SINGLE-T and SINGLE-F questions over
seven categories and four source tables, about 330 bytes a line), by default of 10,000 and
1,000,000 lines, and runs the real command line on each,

    python -m gramagents eval DATASET --model openai:fake@URL --limit 10 --run-dir R --no-cache

against the test chat server (testing/openai_server.py) in this process. Each eval is a
subprocess; its peak resident memory is the kernel's count for it (`wait4`'s `ru_maxrss`),
and its wall time is measured around it. The eval reads every line (each is checked, hashed
and its id noted), keeps a sample of 10 questions per task, asks the model, and writes the
run folder and its viewer.

    python bench/memory.py [--small 10000] [--large 1000000] [--limit 10] [--keep DIR]

It prints both evals side by side and ends with a RESULT line: the larger eval's peak RSS
must be within 1.5 times the smaller's.
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

from gramagents.testing.drills import cli_env
from gramagents.testing.openai_server import FakeChatServer

CATEGORIES = (
    "Modal verbs",
    "能愿动词",
    "程度副词",
    "Past simple",
    "把字句",
    "Comparatives",
    "的字结构",
)
TARGET = 1.5


def write_dataset(path: Path, lines: int) -> Path:
    """`lines` items, written in blocks (the writer's memory stays small too)."""
    with path.open("w", encoding="utf-8") as handle:
        block: list[str] = []
        for n in range(lines):
            category = CATEGORIES[n % len(CATEGORIES)]
            item = {
                "id": f"SINGLE-{'TF'[n % 2]}/{n:07d}",
                "task": f"SINGLE-{'TF'[n % 2]}",
                "prompt": {
                    "template": "raw.md",
                    "vars": {
                        "text": f"Sentence {n}: 'She can swim in the river every morning.' "
                        f"Does it show the grammar point [{category}]? Answer T or F."
                    },
                },
                "answer": "TF"[n % 2],
                "meta": {
                    "category": category,
                    "level": 1 + n % 5,
                    "language": "en",
                    "point": f"P{n % 300}",
                    "source": f"table-{n % 4}.csv:{n + 2}",
                },
            }
            block.append(json.dumps(item, ensure_ascii=False))
            if len(block) == 10_000:
                handle.write("\n".join(block) + "\n")
                block.clear()
        if block:
            handle.write("\n".join(block) + "\n")
    return path


def run_eval(dataset: Path, url: str, run_dir: Path, limit: int) -> dict[str, float]:
    """One eval as a subprocess: its peak RSS (MB), wall time (s) and the answers it recorded."""
    cmd = [
        sys.executable, "-m", "gramagents", "eval", str(dataset),
        "--model", f"openai:fake@{url}", "--limit", str(limit),
        "--run-dir", str(run_dir), "--no-cache",
    ]  # fmt: skip
    env = cli_env(run_dir.parent / f"{run_dir.name}.cache.sqlite")
    started = time.perf_counter()
    process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    out, err = process.stdout.read(), process.stderr.read()  # type: ignore[union-attr]
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"eval of {dataset} failed ({process.returncode}): {err.decode()[-800:]}")
    answers = sum(1 for _ in (run_dir / "scores.jsonl").open(encoding="utf-8"))
    return {
        "rss_mb": usage.ru_maxrss / 1024,  # Linux counts kilobytes
        "wall_s": wall,
        "answers": answers,
        "status_line": out.decode().splitlines()[0] if out else "",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--keep", type=Path, default=None, help="folder to keep the files in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gramagents-memory-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results = {}
        with FakeChatServer(responder=lambda body: "T") as server:
            for lines in (args.small, args.large):
                started = time.perf_counter()
                dataset = write_dataset(folder / f"d{lines}.jsonl", lines)
                size = dataset.stat().st_size / 1e6
                took = time.perf_counter() - started
                print(f"wrote {lines:,} lines ({size:,.1f} MB) in {took:.1f} s")
                result = run_eval(dataset, server.base_url, folder / f"run{lines}", args.limit)
                results[lines] = {**result, "mb": size}
                print(
                    f"  eval --limit {args.limit}: peak RSS {result['rss_mb']:,.1f} MB, "
                    f"{result['wall_s']:.1f} s, {result['answers']} answers "
                    f"({result['status_line']})"
                )
    small, large = results[args.small], results[args.large]
    ratio = large["rss_mb"] / small["rss_mb"]
    print(
        f"RESULT memory: eval --limit {args.limit} peak RSS {small['rss_mb']:.1f} MB on "
        f"{args.small:,} lines ({small['mb']:.1f} MB, {small['wall_s']:.1f} s) vs "
        f"{large['rss_mb']:.1f} MB on {args.large:,} lines ({large['mb']:.1f} MB, "
        f"{large['wall_s']:.1f} s): ratio {ratio:.2f} (target <= {TARGET}) "
        + ("pass" if ratio <= TARGET else "fail")
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
