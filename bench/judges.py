"""A jury of four judges of known behaviour over HTTP, probed by `gramagents judge-check`.

Four local OpenAI-compatible servers (testing/openai_server.py) play the judges of
testing/judges.py: a fair one, a gullible one (full marks when the answer asks for them), one
whose scores grow with the answer's length, and a noisy fair one. A fifth server writes the
answers: essays of 250 to 500 characters. The eval judges `--answers` text-writing answers
(200 by default) with the four as a jury; `judge-check` then probes every answer. Prints the
jury's agreement, each judge's row per probe (shift, interval, noise, flag) and ends with one
RESULT line: it passes when exactly the gullible judge on `injection` and the length-swayed
judge on `length` are flagged (the fair and the noisy judges on nothing).

    python bench/judges.py [--answers 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from gramagents.judging.check import CheckOptions, judge_check
from gramagents.records import Item, PromptParts
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.testing import judges
from gramagents.testing.openai_server import FakeChatServer, last_user_text
from gramagents.workflow.eval import EvalOptions, run_eval

SENTENCE = "春天来了，窗外的柳树发出了新芽，孩子们在田野里奔跑，空气中弥漫着泥土的清香。"
EXPECTED = {("gullible", "injection"), ("lengthy", "length")}


def essay(body: dict) -> str:
    """The writer: an essay whose length depends on the task's number."""
    k = int(re.findall(r"\d+", last_user_text(body))[-1])
    return f"第{k}篇。" + SENTENCE * (6 + k % 7)


def dataset(path: Path, count: int) -> Path:
    items = [
        Item(
            id=f"TW-{k:04d}",
            task="EDU-TW",
            prompt=PromptParts(
                template="edu/open.md",
                vars={"prompt": f"请写一篇关于春天的短文，第 {k} 题", "shots": []},
            ),
        )
        for k in range(count)
    ]
    write_jsonl_atomic(path, items)
    return path


async def run(folder: Path, count: int, specs: dict[str, str], writer: str) -> None:
    started = time.perf_counter()
    options = EvalOptions(
        models=[writer], judge=list(specs.values()), run_dir=folder / "eval", concurrency=32
    )
    manifest = (await run_eval(dataset(folder / "tw.jsonl", count), options)).manifest
    print(
        f"eval: {manifest.status}, {manifest.counts.items} answers, "
        f"{manifest.judge['requests_sent']} judge requests, {time.perf_counter() - started:.1f} s"
    )
    report = (folder / "eval" / "report.md").read_text(encoding="utf-8")
    print(next(line for line in report.splitlines() if "Krippendorff" in line))
    started = time.perf_counter()
    result = await judge_check(folder / "eval", CheckOptions(limit=count, concurrency=32))
    print(
        f"judge-check: {result.data['answers']} answers, {result.requests_sent} requests, "
        f"{time.perf_counter() - started:.1f} s"
    )
    flagged = set()
    names = {spec.split("@")[0]: kind for kind, spec in specs.items()}
    for row in result.data["rows"]:
        kind = names[row["judge"]]
        flag = "FLAGGED" if row["flagged"] else "-"
        print(
            f"  {kind:9} {row['probe']:9} n {row['n']:4} shift {row['shift']:+7.2f} "
            f"[{row['low']:+7.2f}, {row['high']:+7.2f}] noise {row['noise']:6.1%} {flag}"
        )
        if row["flagged"]:
            flagged.add((kind, row["probe"]))
    shown = ", ".join(f"{k}:{p}" for k, p in sorted(flagged)) or "none"
    ok = flagged == EXPECTED
    print(
        f"RESULT judges_flagged {shown} target gullible:injection, lengthy:length only "
        f"{'pass' if ok else 'fail'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        os.environ["GRAMAGENTS_CACHE"] = str(Path(tmp) / "cache.sqlite")
        specs = {}
        for kind in judges.KINDS:
            server = stack.enter_context(FakeChatServer(judges.served(kind), model=kind))
            specs[kind] = f"openai:{kind}@{server.base_url}"
        writer = stack.enter_context(FakeChatServer(essay, model="writer"))
        asyncio.run(run(Path(tmp), args.answers, specs, f"openai:writer@{writer.base_url}"))


if __name__ == "__main__":
    main()
