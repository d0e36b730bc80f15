"""Loading and running the embedded SmolLM2: plain transformers against gramagents, side by side.

1. Load time: `AutoModelForCausalLM.from_pretrained(..., gguf_file=...)` (transformers parses and
   dequantizes the GGUF file at every start) against gramagents' load (the GGUF is converted
   once, then read as a plain safetensors folder).
2. Throughput on the example SINGLE banks: a plain transformers loop (batches of 16 in dataset
   order, float32, the same prompts and the same max_new_tokens) against the hf backend
   (length-sorted batches of 16, the CPU's fastest dtype), no cache.

    python bench/embedded.py [--items N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=192)
    args = parser.parse_args()
    from gramagents.process import QUIET

    for name, value in QUIET.items():  # as the command line runs: no bars, no advice
        os.environ.setdefault(name, value)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gramagents.models import Model, create_backend
    from gramagents.models.embedded import GGUF_FILE, embedded_folder
    from gramagents.models.hf_load import _LOADED
    from gramagents.records import ChatRequest
    from gramagents.tasks import get_task
    from gramagents.templates import load_prompt
    from gramagents.workflow.build import BuildOptions, run_build

    os.environ["GRAMAGENTS_CACHE"] = str(Path(tempfile.mkdtemp()) / "unused.sqlite")

    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(embedded_folder(), gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(embedded_folder(), gguf_file=GGUF_FILE).eval()
    plain_load = time.perf_counter() - started

    backend = create_backend("smollm2")
    backend.lm  # noqa: B018 - first load converts the GGUF when it never has on this machine
    _LOADED.clear()
    started = time.perf_counter()
    backend.lm  # noqa: B018
    ours_load = time.perf_counter() - started
    print(
        f"load: transformers from GGUF {plain_load:.2f} s; gramagents {ours_load:.2f} s "
        f"({plain_load / ours_load:.0f}x faster)"
    )

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-embedded-"))
    build = asyncio.run(
        run_build(
            "cpg",
            BuildOptions(
                source=ROOT / "examples" / "cpg" / "grammar-points.jsonl",
                agents=False,
                run_dir=work / "data",
            ),
        )
    )
    items = build.items[: args.items]
    requests = []
    for item in items:
        template = load_prompt(item.prompt.template)
        requests.append(
            ChatRequest(
                messages=template.render(item.prompt.vars),
                params=get_task(item.task).params,
                prompt_hash=template.hash,
            )
        )
    max_new = requests[0].params.max_tokens

    tokenizer.padding_side = "left"
    torch.set_grad_enabled(False)
    started = time.perf_counter()
    for start in range(0, len(requests), 16):
        texts = [
            tokenizer.apply_chat_template(
                [m.model_dump() for m in r.messages], tokenize=False, add_generation_prompt=True
            )
            for r in requests[start : start + 16]
        ]
        batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        model.generate(
            **batch, max_new_tokens=max_new, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    plain_rate = len(requests) / (time.perf_counter() - started)

    started = time.perf_counter()
    asyncio.run(Model(backend).generate(requests))
    ours_rate = len(requests) / (time.perf_counter() - started)
    print(
        f"throughput ({len(requests)} SINGLE items, batch 16, max_new_tokens {max_new}): "
        f"transformers {plain_rate:.1f} items/s; gramagents {ours_rate:.1f} items/s "
        f"({ours_rate / plain_rate:.1f}x; dtype {backend.dtype})"
    )
    print(
        f"load speedup {plain_load / ours_load:.1f} x (target >= 1: "
        f"{'pass' if plain_load > ours_load else 'fail'})"
    )
    print(
        f"RESULT embedded_throughput_speedup {ours_rate / plain_rate:.1f} x target >= 1 "
        f"{'pass' if ours_rate > plain_rate else 'fail'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
