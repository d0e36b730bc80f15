"""What the eval graph costs: the graph against a bare loop doing the same work.

40,000 items (CPG banks from a synthetic 1,040-point table, all eight tasks) are evaluated
with a zero-latency scripted model and no cache, twice: by `gramagents eval`'s graph
(`run_eval`: plan, chunks fanned out with `Send`, each chunk's answer node asking the model
and scoring, records appended, summary and `report.md` written; the viewer is left out, as
`bench/view.py` measures it), and by a plain loop over the
same items that renders each prompt, asks the same scripted model, extracts and scores with
the same functions, appends the same records to JSONL files and writes the summary. The
loop is the floor; the overhead is the graph's time over the loop's.

Both sides run `--repeat` times, in turns whose order flips every round (loop then graph,
graph then loop, ...), so that a slow spell of a shared machine falls on both alike. The
overhead that counts is the median of the rounds' ratios (each graph run against the loop run
of its round); best against best is printed beside it, and both must be under the target.

    python bench/graph.py [--items 40000] [--repeat 10] [--collector tuned]

Both sides run with the cyclic collector tuned for bulk work, as every `gramagents` command
runs (`runtime/memory.py`'s `tuned_collector`); `--collector default` leaves it as a program
that calls `run_eval` without asking has it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET = 10.0  # percent


def answer(request) -> str:
    return "T"


def bare_loop(dataset: Path, out: Path) -> float:
    """Seconds the loop takes, letting go of its items included (as `run_eval`'s time does)."""
    started = time.perf_counter()
    loop_work(dataset, out)
    return time.perf_counter() - started


def loop_work(dataset: Path, out: Path) -> None:
    """The same work as the graph, item by item, with nothing around it."""
    from gramagents.models import Model, create_backend
    from gramagents.records import ChatRequest, ResponseRecord, ScoreRecord
    from gramagents.report.summary import SummaryBuilder
    from gramagents.runtime.memory import long_lived
    from gramagents.runtime.rundir import write_atomic
    from gramagents.scoring.extract import extract
    from gramagents.scoring.metrics import ItemScore, score_item
    from gramagents.sources.datasets import read_dataset
    from gramagents.tasks import get_task
    from gramagents.templates import load_prompt
    from gramagents.workflow.eval_score import SCORE_META_KEYS

    backend = create_backend("scripted:bench-graph")
    model = Model(backend)
    out.mkdir(parents=True)
    summary = SummaryBuilder()
    specs: dict[str, object] = {}
    templates: dict[str, object] = {}
    with (
        long_lived(),  # the same collector settings as `run_eval`: the items are left alone
        (out / "responses.jsonl").open("w", encoding="utf-8") as responses,
        (out / "scores.jsonl").open("w", encoding="utf-8") as scores,
    ):
        items = read_dataset(dataset).items
        for item in items:
            spec = specs.get(item.task) or specs.setdefault(item.task, get_task(item.task))
            name = item.prompt.template
            template = templates.get(name) or templates.setdefault(name, load_prompt(name))
            request = ChatRequest(
                messages=template.render(item.prompt.vars),
                params=spec.params,
                prompt_hash=template.hash,
            )
            text = backend.responder(request)
            meta_keys = (*SCORE_META_KEYS, *spec.breakdowns)
            known = {**item.prompt.vars, **item.meta}
            extraction = extract(spec.extractor, text, known, request.messages)
            result = (
                ItemScore({})
                if item.answer is None
                else score_item(spec.metric, extraction, item.answer, item.meta)
            )
            response = ResponseRecord(
                model=model.label,
                item_id=item.id,
                task=item.task,
                raw=text,
                extracted=extraction.value,
                rule=extraction.rule,
                invalid_reason=extraction.reason,
                prompt_hash=template.hash,
            )
            score = ScoreRecord(
                model=model.label,
                item_id=item.id,
                task=item.task,
                gold=item.answer,
                extracted=extraction.value,
                invalid=extraction.invalid,
                invalid_reason=extraction.reason,
                scores=result.scores,
                details=result.details,
                meta={k: item.meta[k] for k in meta_keys if k in item.meta},
            )
            responses.write(response.model_dump_json() + "\n")
            scores.write(score.model_dump_json() + "\n")
            summary.add_score(score)
    rows = [row.model_dump(mode="json") for row in summary.summary().rows()]
    write_atomic(out / "summary.json", json.dumps(rows, ensure_ascii=False, indent=2))


def graph(dataset: Path, out: Path) -> float:
    from gramagents.workflow.eval import EvalOptions, run_eval

    started = time.perf_counter()
    # the viewer (report.html) is reporting, not the graph: bench/view.py measures it
    options = EvalOptions(models=["scripted:bench-graph"], run_dir=out, use_cache=False, view=False)
    asyncio.run(run_eval(dataset, options))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=10, help="rounds (runs of each side)")
    parser.add_argument("--collector", choices=("tuned", "default"), default="tuned")
    args = parser.parse_args()
    from gramagents.runtime.memory import tuned_collector

    with tuned_collector() if args.collector == "tuned" else contextlib.nullcontext():
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Build the items, run both sides in turns, print the figures; 0 if within target."""

    from gramagents.models.scripted import ScriptedBackend
    from gramagents.testing.tables import write_synthetic_table
    from gramagents.workflow.build import BuildOptions, run_build
    from gramagents.workflow.eval_graph import eval_graph

    ScriptedBackend.register("bench-graph", answer)
    eval_graph()  # imported and compiled before the clock starts, like the loop's imports
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-graph-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    table = write_synthetic_table(work / "table.jsonl", points=1040)
    built = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / "data"))
    ).dataset_path
    lines = built.read_text(encoding="utf-8").splitlines()[: args.items]
    dataset = work / "items" / "dataset.jsonl"
    dataset.parent.mkdir()
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")

    loop_times, graph_times = [], []
    for run in range(args.repeat):  # in turns, the first side flipping every round
        sides = [("loop", bare_loop, loop_times), ("graph", graph, graph_times)]
        for name, side, times in sides if run % 2 == 0 else sides[::-1]:
            times.append(side(dataset, work / f"{name}-{run}"))
    loop_s, graph_s = min(loop_times), min(graph_times)
    same = sorted((work / "loop-0" / "scores.jsonl").read_text().splitlines()) == sorted(
        (work / "graph-0" / "scores.jsonl").read_text().splitlines()
    )
    overhead = 100.0 * (graph_s / loop_s - 1.0)
    paired = sorted(100.0 * (g / lo - 1.0) for lo, g in zip(loop_times, graph_times, strict=True))
    median = statistics.median(paired)
    runs = ", ".join(f"{lo:.2f}/{g:.2f}" for lo, g in zip(loop_times, graph_times, strict=True))
    print(f"{len(lines)} items, scripted model, no cache, collector {args.collector}")
    print(f"bare loop: best {loop_s:.2f} s ({len(lines) / loop_s:.0f} items/s)")
    print(f"eval graph: best {graph_s:.2f} s ({len(lines) / graph_s:.0f} items/s)")
    print(f"seconds by round, loop/graph: {runs}")
    print(f"same scores from both: {same}")
    print(
        f"overhead, best run against best run: {overhead:.1f} %; run by run (each graph run "
        f"against the loop run of its round): median {median:.1f} %, "
        f"range {paired[0]:.1f} to {paired[-1]:.1f} %"
    )
    ok = median < TARGET and overhead < TARGET and same
    verdict = "pass" if ok else "fail"
    print(f"RESULT graph_overhead median {median:.1f} % target < {TARGET:g} {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
