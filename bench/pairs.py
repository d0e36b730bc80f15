"""Minimal pairs by log-likelihood: gramagents against lm-evaluation-harness, side by side.

Both load the same model folder (the embedded SmolLM2 as gramagents converts it: plain
safetensors, float32 for both) and score the same project-made BLiMP-format pairs
(gramagents.testing.tables.write_synthetic_blimp): lm-eval through a `multiple_choice` task
equivalent to its BLiMP tasks (empty context, the two sentences as choices, no delimiter).
Each side is timed at every batch size listed (its best counts), model loading excluded
(both load before the clock starts). Prints pairs/s, the ratio, and the share of pairs on
which both make the same decision (it must be 100 %).

Most of the gain comes from scoring shared prefixes once (`prefix_sharing`, on by default):
the two sentences of a pair share their first words, and template-made pairs (BLiMP's and
these) share openings across pairs too. The script also times gramagents with
`prefix_sharing=false`, so the share of the gain owed to it is visible.

    python bench/pairs.py [--pairs 2000] [--batch-sizes 16,32,64] [--dtype float32] [--device D]
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
from pathlib import Path

TARGET = 1.5

TASK_YAML = """\
task: gramagents_pairs
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: ""
doc_to_target: 0
doc_to_choice: "{{{{[sentence_good, sentence_bad]}}}}"
target_delimiter: ""
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


def ours(
    data: Path, folder: Path, dtype: str, device: str, batch: int, work: Path, options: str = ""
) -> tuple[float, list[bool]]:
    from gramagents.models import create_backend
    from gramagents.workflow.eval import EvalOptions, run_eval

    spec = f"hf:{folder}?dtype={dtype}&device={device}&batch_size={batch}{options}"
    create_backend(spec).lm  # noqa: B018 - load before timing
    run_dir = work / f"ours-{batch}{options.replace('&', '-').replace('=', '-')}"
    started = time.perf_counter()
    asyncio.run(
        run_eval(
            data,
            EvalOptions(  # the viewer is reporting, not scoring: bench/view.py measures it
                models=[spec], fmt="blimp", run_dir=run_dir, use_cache=False, view=False
            ),
        )
    )
    elapsed = time.perf_counter() - started
    rows = [json.loads(x) for x in (run_dir / "responses.jsonl").read_text().splitlines()]
    order = {f"BLIMP/synthetic_agreement/{i}": i for i in range(len(rows))}
    rows.sort(key=lambda r: order[r["item_id"]])
    return elapsed, [r["extracted"] == "good" for r in rows]


def theirs(
    data: Path, folder: Path, dtype: str, device: str, batch: int, work: Path
) -> tuple[float, list[bool]]:
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    task_dir = work / "lm_eval_task"
    task_dir.mkdir(exist_ok=True)
    (task_dir / "gramagents_pairs.yaml").write_text(TASK_YAML.format(data=data))
    model = HFLM(pretrained=str(folder), dtype=dtype, batch_size=batch, device=device)
    manager = TaskManager(include_path=str(task_dir))
    started = time.perf_counter()
    results = simple_evaluate(
        model=model, tasks=["gramagents_pairs"], task_manager=manager, log_samples=True
    )
    elapsed = time.perf_counter() - started
    samples = sorted(results["samples"]["gramagents_pairs"], key=lambda s: s["doc_id"])
    decisions = [s["filtered_resps"][0][0] > s["filtered_resps"][1][0] for s in samples]
    return elapsed, decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
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
    from gramagents.testing.tables import write_synthetic_blimp

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    where = torch.cuda.get_device_name(0) if device == "cuda" else f"cpu x{os.cpu_count()}"
    print(f"device: {where}")
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-pairs-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    data = write_synthetic_blimp(work / "pairs.jsonl", args.pairs)
    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    sizes = [int(x) for x in args.batch_sizes.split(",")]

    best: dict[str, tuple[float, int, list[bool]]] = {}
    for name, run in (("lm-eval", theirs), ("gramagents", ours)):
        for batch in sizes:
            elapsed, decisions = run(data, folder, args.dtype, device, batch, work)
            print(
                f"{name:10s} batch {batch:3d}: {args.pairs / elapsed:7.1f} pairs/s "
                f"({elapsed:.2f} s, accuracy {sum(decisions) / len(decisions):.3f})"
            )
            if name not in best or elapsed < best[name][0]:
                best[name] = (elapsed, batch, decisions)
    ours_s, ours_batch, ours_decisions = best["gramagents"]
    plain_s, plain = ours(
        data, folder, args.dtype, device, ours_batch, work, "&prefix_sharing=false"
    )
    print(
        f"gramagents batch {ours_batch:3d}, prefix_sharing=false: {args.pairs / plain_s:7.1f} "
        f"pairs/s ({plain_s:.2f} s, accuracy {sum(plain) / len(plain):.3f})"
    )
    theirs_s, theirs_batch, theirs_decisions = best["lm-eval"]
    same = sum(a == b for a, b in zip(ours_decisions, theirs_decisions, strict=True))
    agreement = same / len(ours_decisions)
    ratio = theirs_s / ours_s
    print(
        f"best: gramagents {args.pairs / ours_s:.1f} pairs/s (batch {ours_batch}), lm-eval "
        f"{args.pairs / theirs_s:.1f} pairs/s (batch {theirs_batch}); ratio {ratio:.2f}; "
        f"same decision on {100 * agreement:.2f} % of {len(ours_decisions)} pairs "
        f"({args.dtype}); without prefix sharing the ratio is {theirs_s / plain_s:.2f}"
    )
    ok = ratio >= TARGET and agreement == 1.0
    print(f"RESULT pairs_speedup {ratio:.2f} x target >= {TARGET:g} {'pass' if ok else 'fail'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
