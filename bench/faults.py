"""Faults and kills: an API eval that meets every kind of fault, or is killed and resumed,
records every item once with the scores of an undisturbed run.

The test chat server (gramagents.testing.openai_server) runs in this process; each eval is
the real command line, `python -m gramagents eval DATASET --model openai:fake@URL?timeout=T`,
in a subprocess with its own response cache and the default retry policy.

Faults (the default mode): an undisturbed run first, then the same dataset with a seeded
fraction (`--rate`) of all requests failed, the kinds drawn evenly from HTTP 429 with
`Retry-After`, 500, 503, a connection reset, an answer slower than the client's timeout, a
body cut off halfway and a body that is not JSON (the eighth kind, output that fails a
response schema, only meets structured requests: the agents' and the judge's; see
tests/test_faults.py and tests/test_kill_resume.py). Because the server's plan is a function of
the seed, the request body and its repeat only, the undisturbed run's request bodies and the
retry policy determine the number of requests the faulty run needs: that is the budget the
server's count is held to.

    python bench/faults.py [--items 2000] [--rate 0.2] [--seed 7] [--concurrency 128]

It ends with `faults survived N/N, lost 0, duplicated 0, identical yes, requests R (budget B)`
and a RESULT line.

Kills (`--kills K`): the faulty eval is SIGKILLed at K random points (a number of requests
the server has received) and run again with the same `--run-dir` after each kill; then it is
compared with the undisturbed run as above, and the server's log shows whether any request
whose answer the run folder already held when it was killed was sent again. The budget grows
by the requests that can be in flight at each kill (`--concurrency` per kill).

    python bench/faults.py --kills 5 [--rate 0.0]

Hostile servers (`--server drip` or `--server oversized`): every answer of the server drips
its body one byte every `--drip` seconds, or is `--reply-mb` megabytes long (sent without a
Content-Length). Every item must be recorded once, as a failed request (a timeout after the
retry policy's attempts, or `too-large` after one request), in a time the retry policy
bounds, with the eval's peak memory (its resident set, from `wait4`) under `--max-rss-mb` and
its run folder under `--max-folder-mb`.

    python bench/faults.py --server drip [--items 256 --timeout 1 --drip 0.05]
    python bench/faults.py --server oversized [--items 64 --reply-mb 20 --concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

from gramagents.runtime.retry import RetryPolicy
from gramagents.testing.drills import (
    KillPlan,
    check_run,
    cli_env,
    drill_answer,
    eval_command,
    fault_plan,
    implied_requests,
    item_of,
    jsonl_lines,
    kill_and_resume,
    recorded_items,
    run_cli,
    run_measured,
    write_drill_dataset,
)
from gramagents.testing.openai_server import FakeChatServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=None, help="2000; hostile servers 64")
    parser.add_argument("--rate", type=float, default=None, help="0.2; with --kills, 0")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=None, help="128; hostile servers 16")
    parser.add_argument("--timeout", type=float, default=None, help="seconds; 1, oversized 5")
    parser.add_argument("--kills", type=int, default=0, help="kill and resume this often")
    parser.add_argument("--server", choices=["drip", "oversized"], help="a hostile server")
    parser.add_argument("--drip", type=float, default=0.05, help="seconds between body bytes")
    parser.add_argument("--reply-mb", type=float, default=20.0, help="size of every answer")
    parser.add_argument("--max-rss-mb", type=float, default=600.0)
    parser.add_argument("--max-folder-mb", type=float, default=20.0)
    args = parser.parse_args()
    hostile_mode = args.server is not None
    args.items = args.items or (64 if hostile_mode else 2000)
    args.concurrency = args.concurrency or (16 if hostile_mode else 128)
    args.timeout = args.timeout or (5.0 if args.server == "oversized" else 1.0)
    if hostile_mode:
        return hostile(args)
    rate = args.rate if args.rate is not None else (0.0 if args.kills else 0.2)
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-faults-"))
    dataset = write_drill_dataset(work / "dataset.jsonl", args.items)
    plan = fault_plan(rate, args.seed, hang_s=2 * args.timeout)

    with FakeChatServer(responder=drill_answer) as server:

        def command(name: str) -> list[str]:
            return eval_command(
                dataset,
                server.base_url,
                work / name,
                concurrency=args.concurrency,
                timeout=args.timeout,
            )

        started = time.perf_counter()
        reference = run_cli(command("reference"), cli_env(work / "reference.sqlite"), work)
        if reference.returncode != 0:
            print(reference.stderr, file=sys.stderr)
            return 1
        bodies = server.chat_requests()
        print(
            f"undisturbed: {args.items} items, {len(bodies)} requests, "
            f"{time.perf_counter() - started:.1f} s"
        )
        budget, doomed = implied_requests(plan, bodies, RetryPolicy())
        server.reset(plan)
        env = cli_env(work / "faulty.sqlite")
        started = time.perf_counter()
        asked_again = 0
        if args.kills:
            report = kill_and_resume(
                command("faulty"),
                env,
                work,
                server,
                KillPlan(
                    kills=args.kills,
                    expected_requests=budget,
                    recorded=lambda: recorded_items(work / "faulty"),
                    tag=item_of,
                    seed=args.seed,
                ),
            )
            asked_again = len(report.asked_again)
            print(
                f"killed {report.kills} times (after {', '.join(map(str, report.points))} "
                f"requests); asked again for a recorded answer: {asked_again}"
            )
        else:
            run_cli(command("faulty"), env, work)
        elapsed = time.perf_counter() - started
        stats = server.stats()

    check = check_run(work / "reference", work / "faulty", args.items)
    requests = stats["chat_requests"]
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(stats["counts"].items()))
    print(f"with faults at {rate:.0%} (seed {args.seed}): {elapsed:.1f} s; the server saw {kinds}")
    if doomed:
        print(f"the plan fails {doomed} items past the retry policy's attempts")
    print(f"final status {check.status}")
    if args.kills:  # at most the requests in flight at each kill are sent again
        budget += args.kills * args.concurrency
    within = requests <= budget
    ok = (
        check.status == "complete"
        and check.lost == 0
        and check.duplicated == 0
        and check.identical
        and within
        and asked_again == 0
    )
    print(
        f"faults survived {check.survived}/{check.items}, lost {check.lost}, "
        f"duplicated {check.duplicated}, identical {'yes' if check.identical else 'no'}, "
        f"requests {requests} (budget {budget})"
    )
    mode = f"kills_{args.kills}" if args.kills else "faults"
    print(
        f"RESULT {mode} survived {check.survived}/{check.items} target all, none twice, "
        f"identical{', none asked again' if args.kills else ', within budget'} "
        f"{'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


def hostile_server(args: argparse.Namespace) -> tuple[FakeChatServer, int, float]:
    """The hostile server, the requests it must receive, and the seconds the eval may take.

    A dripping answer costs each item every attempt of the retry policy, each ended by the
    timeout, with the policy's waits between them; an oversized one, one request.
    """
    policy = RetryPolicy()
    waves = math.ceil(args.items / args.concurrency)
    if args.server == "drip":
        waits = sum(
            min(policy.max_backoff, policy.initial_backoff * 2**k)
            for k in range(policy.max_attempts - 1)
        )
        bound = 60 + waves * (policy.max_attempts * args.timeout + waits * (1 + policy.jitter))
        server = FakeChatServer(responder=drill_answer, drip_s=args.drip)
        return server, args.items * policy.max_attempts, bound
    server = FakeChatServer(responder=drill_answer, reply_bytes=int(args.reply_mb * 1e6))
    return server, args.items, 60 + waves * 5.0


def hostile(args: argparse.Namespace) -> int:
    """Every answer drips or is oversized: each item one failure, time and memory bounded."""
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-hostile-"))
    dataset = write_drill_dataset(work / "dataset.jsonl", args.items)
    server, expected, bound = hostile_server(args)
    run_dir = work / "run"
    with server:
        command = eval_command(
            dataset, server.base_url, run_dir, concurrency=args.concurrency, timeout=args.timeout
        )
        started = time.perf_counter()
        code, stderr, peak = run_measured(command, cli_env(work / "cache.sqlite"), work)
        elapsed = time.perf_counter() - started
        stats = server.stats()
    lines = jsonl_lines(run_dir / "responses.jsonl") + jsonl_lines(run_dir / "failures.jsonl")
    records = [json.loads(line) for line in lines]
    ids = [r["item_id"] for r in records]
    failed = [r for r in records if r.get("error")]
    reason = "TimeoutError: no whole reply" if args.server == "drip" else "too-large: "
    as_expected = sum(1 for r in failed if r["error"].startswith(reason))
    lost, duplicated = args.items - len(set(ids)), len(ids) - len(set(ids))
    folder_mb = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file()) / 1e6
    peak_mb, requests = peak / 1e6, stats["chat_requests"]
    print(f"{args.server}: {args.items} items at concurrency {args.concurrency}, exit {code}")
    print(
        f"failed as expected ({reason.strip()}) {as_expected}/{args.items}, lost {lost}, "
        f"duplicated {duplicated}, requests {requests} (expected {expected})"
    )
    print(f"time {elapsed:.1f} s (bound {bound:.0f} s), peak memory {peak_mb:.0f} MB "
          f"(bound {args.max_rss_mb:.0f}), run folder {folder_mb:.2f} MB "
          f"(bound {args.max_folder_mb:.0f})")  # fmt: skip
    ok = (
        code in (0, 1)
        and as_expected == args.items
        and lost == 0
        and duplicated == 0
        and requests == expected
        and elapsed <= bound
        and peak_mb <= args.max_rss_mb
        and folder_mb <= args.max_folder_mb
    )
    if not ok and code not in (0, 1):
        print(stderr, file=sys.stderr)
    print(
        f"RESULT {args.server} recorded once {len(set(ids)) - lost}/{args.items} "
        f"time {elapsed:.0f}/{bound:.0f} s rss {peak_mb:.0f}/{args.max_rss_mb:.0f} MB "
        f"folder {folder_mb:.1f}/{args.max_folder_mb:.0f} MB {'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
