"""Minimal pairs by log-likelihood: gramagents against lm-evaluation-harness's published task
definitions, side by side.

Three sets of pairs written in the published benchmarks' own styles
(gramagents.testing.pair_sets; paradigms of real-looking sentences whose two versions differ in
one word, at the start, in the middle or at the end): BLiMP (eight English paradigms, BLiMP
JSONL), CLiMP (six Chinese paradigms, in the released corpus's file layouts) and GEC-PAIR
(learner sentences against their corrections, a gramagents dataset).

lm-eval scores each set through its own published task templates, included from the installed
package with only the data source replaced by a local file: `blimp/_template_yaml` (empty
context, the two sentences as choices, the default target delimiter " ") and
`zhoblimp/_template_yaml` (its Chinese minimal-pair task, the same with `target_delimiter: ""`;
lm-eval has no CLiMP task). Its decisions are its own per-sample `acc`. gramagents scores each
set with its default conditioning (BLiMP and GEC-PAIR `spaced`, the BLiMP definition's; CLiMP
`bare`, the ZhoBLiMP definition's) and with the other one.

Both sides load the same model folder (the embedded SmolLM2 as gramagents converts it, float32
by default) before their clock starts. BLiMP is timed at every batch size listed (each side's
best counts); CLiMP and GEC-PAIR at each side's best BLiMP batch size. Printed: pairs/s, the
share of same decisions for each gramagents conditioning against each lm-eval definition, and
one RESULT line: the BLiMP speed ratio, passing when every set's default conditioning makes the
same decision as its definition on >= 99.5 % of pairs and runs >= 1.5x lm-eval's pairs/s.

Most of the speed comes from scoring shared prefixes once (`prefix_sharing`, on by default): the
two sentences of a pair share their first words, and paradigm-made pairs share openings across
pairs; BLiMP is also timed with `prefix_sharing=false`.

    python bench/pairs.py [--pairs 2000] [--climp-pairs 1000] [--gec-pairs 1000]
        [--batch-sizes 16,32,64] [--sets blimp,climp,gec] [--dtype float32] [--device D]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

TARGET = 1.5
AGREEMENT = 0.995
DEFINITIONS = {"blimp": "blimp/_template_yaml", "zhoblimp": "zhoblimp/_template_yaml"}
"""lm-eval's published templates: BLiMP's (delimiter " ") and ZhoBLiMP's (delimiter "")."""
DELIM = {"blimp": " ", "zhoblimp": ""}
"""Their target delimiters."""
DEFINITION_OF = {"spaced": "blimp", "bare": "zhoblimp"}
"""The lm-eval definition each gramagents conditioning corresponds to."""


@dataclass(frozen=True)
class PairSet:
    name: str
    data: Path
    fmt: str
    default: str
    """gramagents' default conditioning for the set's task."""


@dataclass
class Run:
    elapsed: float
    decisions: list[bool]


def ours(
    pairs: PairSet,
    folder: Path,
    args: argparse.Namespace,
    batch: int,
    work: Path,
    conditioning: str,
    options: str = "",
) -> Run:
    from gramagents.models import create_backend
    from gramagents.sources.datasets import read_dataset
    from gramagents.workflow.eval import EvalOptions, run_eval

    spec = f"hf:{folder}?dtype={args.dtype}&device={args.device}&batch_size={batch}{options}"
    create_backend(spec).lm  # noqa: B018 - load before timing
    run_dir = work / f"ours-{pairs.name}-{conditioning}-{batch}{options.replace('&', '-')}"
    started = time.perf_counter()
    asyncio.run(
        run_eval(
            pairs.data,
            EvalOptions(  # the viewer is reporting, not scoring: bench/view.py measures it
                models=[spec],
                fmt=pairs.fmt,
                run_dir=run_dir,
                use_cache=False,
                conditioning=conditioning,
                view=False,
            ),
        )
    )
    elapsed = time.perf_counter() - started
    rows = {
        r["item_id"]: r
        for r in map(json.loads, (run_dir / "responses.jsonl").read_text().splitlines())
    }
    items = read_dataset(pairs.data, pairs.fmt).items
    return Run(elapsed, [rows[i.id]["extracted"] == "good" for i in items])


def lm_eval_data(pairs: PairSet, work: Path) -> Path:
    """The set's pairs as `sentence_good`/`sentence_bad` lines, in the dataset's item order."""
    from gramagents.sources.datasets import read_dataset

    path = work / f"lm-eval-{pairs.name}.jsonl"
    items = read_dataset(pairs.data, pairs.fmt).items
    path.write_text(
        "".join(
            json.dumps(
                {"sentence_good": i.prompt.vars["good"], "sentence_bad": i.prompt.vars["bad"]},
                ensure_ascii=False,
            )
            + "\n"
            for i in items
        ),
        encoding="utf-8",
    )
    return path


def theirs(
    pairs: PairSet, definition: str, folder: Path, args: argparse.Namespace, batch: int, work: Path
) -> Run:
    """lm-eval's published task `definition` on the set's pairs (only the data source set)."""
    import lm_eval
    from lm_eval.evaluator import evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    name = f"gramagents_{pairs.name}_{definition}"
    task_dir = work / f"lm-eval-task-{name}"
    task_dir.mkdir(exist_ok=True)
    template = Path(lm_eval.__file__).parent / "tasks" / DEFINITIONS[definition]
    config = {
        "include": str(template),
        "task": name,
        "dataset_path": "json",
        "dataset_name": None,
        "dataset_kwargs": {
            "data_files": {"train": str(lm_eval_data(pairs, work))},
            "cache_dir": str(work / "datasets"),
        },
    }
    (task_dir / f"{name}.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    model = HFLM(pretrained=str(folder), dtype=args.dtype, batch_size=batch, device=args.device)
    # Loading the task is left off the clock (only ours is indexed: the template is included
    # by its path).
    tasks = TaskManager(include_path=str(task_dir), include_defaults=False).load([name])
    started = time.perf_counter()
    results = evaluate(lm=model, task_dict=tasks, log_samples=True)
    elapsed = time.perf_counter() - started
    samples = sorted(results["samples"][name], key=lambda s: s["doc_id"])
    return Run(elapsed, [bool(s["acc"]) for s in samples])


def same(a: Run, b: Run) -> float:
    return sum(x == y for x, y in zip(a.decisions, b.decisions, strict=True)) / len(a.decisions)


def rate(pairs: int, run: Run) -> str:
    return f"{pairs / run.elapsed:7.1f} pairs/s ({run.elapsed:.2f} s)"


def measure_set(
    pairs: PairSet,
    count: int,
    folder: Path,
    args: argparse.Namespace,
    work: Path,
    sizes: dict[str, list[int]],
) -> tuple[float, float, dict[str, int]]:
    """Time and compare one set; (speed ratio, agreement of the default, best batch sizes)."""
    print(f"\n== {pairs.name}: {count} pairs, gramagents default conditioning {pairs.default}")
    reference = DEFINITION_OF[pairs.default]
    best_theirs: tuple[Run, int] | None = None
    for batch in sizes["lm-eval"]:
        run = theirs(pairs, reference, folder, args, batch, work)
        print(f"lm-eval {reference:8s} batch {batch:3d}: {rate(count, run)}")
        if best_theirs is None or run.elapsed < best_theirs[0].elapsed:
            best_theirs = (run, batch)
    best_ours: tuple[Run, int] | None = None
    for batch in sizes["gramagents"]:
        run = ours(pairs, folder, args, batch, work, pairs.default)
        print(f"gramagents {pairs.default:6s} batch {batch:3d}: {rate(count, run)}")
        if best_ours is None or run.elapsed < best_ours[0].elapsed:
            best_ours = (run, batch)
    assert best_theirs is not None and best_ours is not None
    other = "bare" if pairs.default == "spaced" else "spaced"
    lm_runs = {reference: best_theirs[0]}
    lm_runs[DEFINITION_OF[other]] = theirs(
        pairs, DEFINITION_OF[other], folder, args, best_theirs[1], work
    )
    our_runs = {pairs.default: best_ours[0]}
    our_runs[other] = ours(pairs, folder, args, best_ours[1], work, other)
    print(f"gramagents {other:6s} batch {best_ours[1]:3d}: {rate(count, our_runs[other])}")
    if pairs.name == "blimp":
        plain = ours(
            pairs, folder, args, best_ours[1], work, pairs.default, "&prefix_sharing=false"
        )
        print(
            f"gramagents {pairs.default:6s} batch {best_ours[1]:3d}, prefix_sharing=false: "
            f"{rate(count, plain)} (ratio {best_theirs[0].elapsed / plain.elapsed:.2f})"
        )
    print("same decisions (rows: gramagents conditioning; columns: lm-eval definition):")
    print(f"{'':10s}" + "".join(f"{d + ' (' + repr(DELIM[d]) + ')':>18s}" for d in lm_runs))
    for how, run in our_runs.items():
        print(f"{how:10s}" + "".join(f"{100 * same(run, lm):17.2f}%" for lm in lm_runs.values()))
    agreement = same(best_ours[0], best_theirs[0])
    ratio = best_theirs[0].elapsed / best_ours[0].elapsed
    accuracy = sum(best_ours[0].decisions) / count
    print(
        f"{pairs.name}: gramagents {pairs.default} {count / best_ours[0].elapsed:.1f} pairs/s "
        f"(batch {best_ours[1]}), lm-eval {reference} {count / best_theirs[0].elapsed:.1f} "
        f"pairs/s (batch {best_theirs[1]}): ratio {ratio:.2f}; same decisions "
        f"{100 * agreement:.2f} %; accuracy {accuracy:.3f} against lm-eval's "
        f"{sum(best_theirs[0].decisions) / count:.3f}"
    )
    return ratio, agreement, {"gramagents": best_ours[1], "lm-eval": best_theirs[1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000, help="BLiMP-style pairs")
    parser.add_argument("--climp-pairs", type=int, default=1000)
    parser.add_argument("--gec-pairs", type=int, default=1000)
    parser.add_argument("--sets", default="blimp,climp,gec")
    parser.add_argument("--batch-sizes", default="16,32,64")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument(
        "--device", default=None, help="default: cuda when there is a GPU, else cpu"
    )
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch

    from gramagents.models.embedded import GGUF_FILE, embedded_folder
    from gramagents.models.hf_load import converted_gguf_folder
    from gramagents.testing.pair_sets import write_blimp_style, write_climp_style, write_gec_pairs

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else f"cpu x{os.cpu_count()}"
    print(f"device: {where}; {args.dtype}")
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-pairs-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    every = [int(x) for x in args.batch_sizes.split(",")]
    sets = {
        "blimp": (PairSet("blimp", work / "blimp.jsonl", "blimp", "spaced"), args.pairs),
        "climp": (PairSet("climp", work / "climp", "climp", "bare"), args.climp_pairs),
        "gec": (PairSet("gec", work / "gec-pairs.jsonl", "gramagents", "spaced"), args.gec_pairs),
    }
    write_blimp_style(sets["blimp"][0].data, args.pairs)
    write_climp_style(sets["climp"][0].data, args.climp_pairs)
    write_gec_pairs(sets["gec"][0].data, args.gec_pairs)

    wanted = [s for s in args.sets.split(",") if s]
    sizes = {"gramagents": every, "lm-eval": every}
    outcomes: dict[str, tuple[float, float]] = {}
    for name in wanted:
        pairs, count = sets[name]
        ratio, agreement, best = measure_set(pairs, count, folder, args, work, sizes)
        outcomes[name] = (ratio, agreement)
        if name == wanted[0]:  # the other sets at each side's best batch size
            sizes = {side: [size] for side, size in best.items()}
    ok = all(r >= TARGET and a >= AGREEMENT for r, a in outcomes.values())
    first = outcomes[wanted[0]][0]
    details = "; ".join(
        f"{name} {r:.2f}x, {100 * a:.2f} % same" for name, (r, a) in outcomes.items()
    )
    print(
        f"RESULT pairs_speedup {first:.2f} x target >= {TARGET:g} and >= {100 * AGREEMENT:g} % "
        f"same decisions ({details}) {'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
