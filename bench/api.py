"""Short generations against an OpenAI-compatible server: gramagents against the physical limit,
lm-evaluation-harness and inspect_ai.

The server (gramagents.testing.openai_server, in its own process) answers every request after a
fixed delay and holds many connections at once, so with N requests in flight nothing can do
better than N / delay requests per second. Each client sends the same prompts with N in
flight: gramagents at `--concurrency N` with its default client (the openai SDK's
`AsyncOpenAI` on its aiohttp transport; a whole `run_eval`: reading, checking the server, the
run folder, records and report included), lm-eval's `local-chat-completions` with
`num_concurrent=N`, inspect_ai with `max_connections=N`. Every side runs `--repeat` times,
the sides taking turns, and is judged by its median. Each side's imports are done before its
clock starts (the peers' by their functions' first lines, the SDK's for gramagents).

Beside them, for reference: `floor`, the same requests sent by a bare loop over the same SDK
client (no eval around it), which shows how close to the nominal limit this server and machine
let any client come; and `ga-httpx`, gramagents with `http=httpx` (the SDK's plain httpx
transport), which shows why aiohttp is the default.

    python bench/api.py [--items 2000] [--concurrency 64] [--delay 0.1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_OF_LIMIT = 0.85

TASK_YAML = """\
task: gramagents_api
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n"]
  max_gen_toks: 16
  do_sample: false
metric_list:
  - metric: exact_match
"""


def prompts(count: int) -> list[str]:
    return [
        f"Question {i}: does the sentence 'She can swim.' show the grammar point [can]? "
        "Answer T or F."
        for i in range(count)
    ]


def start_server(delay: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "gramagents.testing.openai_server", "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def server_stats(base_url: str) -> dict[str, int]:
    """What the server received: chat requests and the most it had in flight at once."""
    import urllib.request

    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/stats", timeout=10) as reply:
        return json.loads(reply.read())


def ours(base_url: str, texts: list[str], concurrency: int, work: Path, options: str = "") -> float:
    import openai  # noqa: F401 - imported up front, as the peers' packages are

    from gramagents.records import Item, PromptParts
    from gramagents.runtime.rundir import write_jsonl_atomic
    from gramagents.workflow.eval import EvalOptions, run_eval
    from gramagents.workflow.eval_graph import eval_graph

    eval_graph()  # imports and compiles the graph, as the peers' imports are done up front

    dataset = work / "dataset.jsonl"
    write_jsonl_atomic(
        dataset,
        [
            Item(
                id=f"q{i}",
                task="SINGLE-T",
                prompt=PromptParts(template="raw.md", vars={"text": t}),
                answer="T",
            )
            for i, t in enumerate(texts)
        ],
    )
    options = EvalOptions(
        models=[f"openai:fake@{base_url}{options}"],
        concurrency=concurrency,
        run_dir=work / "ours",
        use_cache=False,
        view=False,  # the viewer is reporting, not requests: bench/view.py measures it
    )
    started = time.perf_counter()
    result = asyncio.run(run_eval(dataset, options))
    elapsed = time.perf_counter() - started
    assert result.manifest.counts.requests_sent == len(texts), result.manifest.counts
    return elapsed


def ours_httpx(base_url: str, texts: list[str], concurrency: int, work: Path) -> float:
    return ours(base_url, texts, concurrency, work, "?http=httpx")


def floor_side(base_url: str, texts: list[str], concurrency: int, work: Path) -> float:
    """The same requests from a bare loop over the SDK client gramagents uses by default."""
    from gramagents.models.openai_transports import SdkTransport

    async def main() -> float:
        client = SdkTransport(base_url, "EMPTY", 120.0, concurrency)
        slots = asyncio.Semaphore(concurrency)

        async def one(text: str) -> None:
            messages = [{"role": "user", "content": text}]
            body = {"model": "fake", "messages": messages, "max_tokens": 16}
            async with slots:
                await client.send(body)

        started = time.perf_counter()
        await asyncio.gather(*(one(t) for t in texts))
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed

    return asyncio.run(main())


def lm_eval_side(base_url: str, texts: list[str], concurrency: int, work: Path) -> float:
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    data = work / "lm_eval.jsonl"
    data.write_text("".join(json.dumps({"prompt": t, "answer": "T"}) + "\n" for t in texts))
    task_dir = work / "lm_eval_task"
    task_dir.mkdir(exist_ok=True)
    (task_dir / "gramagents_api.yaml").write_text(TASK_YAML.format(data=data))
    started = time.perf_counter()
    simple_evaluate(
        model="local-chat-completions",
        model_args=f"model=fake,base_url={base_url}/chat/completions,num_concurrent="
        f"{concurrency},max_retries=1,tokenized_requests=False",
        tasks=["gramagents_api"],
        task_manager=TaskManager(include_path=str(task_dir)),
        apply_chat_template=True,
    )
    return time.perf_counter() - started


def inspect_side(base_url: str, texts: list[str], concurrency: int, work: Path) -> float:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
    task = Task(
        dataset=MemoryDataset([Sample(input=t, target="T") for t in texts]),
        solver=generate(),
        scorer=match(),
    )
    started = time.perf_counter()
    logs = inspect_eval(
        task,
        model="openai/fake",
        model_base_url=base_url,
        max_connections=concurrency,
        log_dir=str(work / "inspect-logs"),
        display="none",
        max_tokens=16,
        # chat completions, as the other sides use (some inspect_ai versions default to the
        # Responses API, which this server does not speak)
        model_args={"responses_api": False},
    )
    log = logs[0]
    if log.status != "success" or any(s.error for s in log.samples or []):
        raise RuntimeError(f"inspect_ai run ended {log.status}: {log.error}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (median counts)")
    parser.add_argument(
        "--skip", default="", help="comma-separated: floor,ga-httpx,lm-eval,inspect_ai"
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-api-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    texts = prompts(args.items)
    limit = args.concurrency / args.delay
    print(
        f"{args.items} items, {args.concurrency} in flight, {args.delay * 1000:.0f} ms per "
        f"answer: the limit is {limit:.0f} items/s; {args.repeat} runs per side"
    )
    sides = [
        ("gramagents", ours),
        ("floor", floor_side),
        ("ga-httpx", ours_httpx),
        ("lm-eval", lm_eval_side),
        ("inspect_ai", inspect_side),
    ]
    skip = set(args.skip.split(","))
    runs: dict[str, list[float]] = {}
    failed: set[str] = set()
    for turn in range(args.repeat):
        for name, run in sides:
            if name in skip or name in failed:
                continue
            folder = work / f"{name}-{turn}"
            folder.mkdir()
            server, base_url = start_server(args.delay)
            try:
                cpu = time.process_time()
                elapsed = run(base_url, texts, args.concurrency, folder)
                cpu = time.process_time() - cpu
                stats = server_stats(base_url)
                if stats["chat_requests"] != args.items:
                    raise RuntimeError(f"the server got {stats['chat_requests']} requests")
            except Exception as exc:  # noqa: BLE001 - a peer that does not run is reported
                print(f"{name:10s}: did not run ({type(exc).__name__}: {exc})")
                failed.add(name)
                continue
            finally:
                server.terminate()
                server.wait()
            rate = args.items / elapsed
            runs.setdefault(name, []).append(rate)
            print(
                f"{name:10s} run {turn + 1}: {rate:6.1f} items/s ({elapsed:.2f} s, "
                f"{100 * rate / limit:.1f} % of the limit; "
                f"{stats['max_in_flight']} in flight at most; "
                f"client CPU {cpu:.2f} s = {1000 * cpu / args.items:.2f} ms per item)"
            )
    rates = {name: statistics.median(values) for name, values in runs.items()}
    print("medians:")
    for name, rate in rates.items():
        print(f"  {name:10s} {rate:6.1f} items/s = {100 * rate / limit:.1f} % of the limit")
    share = rates["gramagents"] / limit
    if "floor" in rates:
        print(f"gramagents reaches {100 * rates['gramagents'] / rates['floor']:.1f} % of the floor")
    peers = {
        k: rates["gramagents"] / v
        for k, v in rates.items()
        if k not in ("gramagents", "floor", "ga-httpx")
    }
    ok = share >= TARGET_OF_LIMIT and all(v >= 1.0 for v in peers.values())
    for name, ratio in peers.items():
        print(f"vs {name}: {ratio:.2f} x (target >= 1: {'pass' if ratio >= 1 else 'fail'})")
    print(
        f"RESULT api_share_of_limit {100 * share:.1f} % target >= {100 * TARGET_OF_LIMIT:.0f} "
        f"{'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
