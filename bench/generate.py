"""Generation throughput: gramagents' local backend against lm-evaluation-harness, side by side.

Both load the same model folder (the embedded SmolLM2 as gramagents converts it, or any
folder given with --model-folder) in the same dtype, apply the model's chat template, and
greedily answer the same project-made CPG questions (SINGLE-T prompts from
gramagents.testing.tables.write_synthetic_table) up to --max-tokens new tokens. Each side is
timed at its batch size, model loading excluded. Throughput counts the new tokens of every
answer, re-tokenized the same way for both sides; the share of identical answers is printed
too (batched greedy decoding can differ in the last bits, so it is reported, not required).

    python bench/generate.py [--prompts 512] [--max-tokens 128] [--batch-size 64]
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

TARGET = 1.0

TASK_YAML = """\
task: gramagents_generate
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: ""
generation_kwargs:
  until: []
  do_sample: false
  max_gen_toks: {max_tokens}
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def questions(work: Path, count: int) -> list[str]:
    from gramagents.recipes.cpg.table import read_grammar_table
    from gramagents.testing.tables import write_synthetic_table

    table = write_synthetic_table(work / "table.jsonl", points=max(1, count // 9 + 1))
    texts = []
    for point in read_grammar_table(table):
        for sentence in point.examples:
            texts.append(
                f"判断下面的句子是否包含语法点“{point.name}”（{point.category}）。"
                f"句子：{sentence} 请回答“T”或“F”，并说明理由。"
            )
    return texts[:count]


def ours(folder: Path, dtype: str, device: str, batch: int, texts: list[str], max_tokens: int):
    from gramagents.models import Model, create_backend
    from gramagents.records import ChatRequest, GenParams, Message

    backend = create_backend(f"hf:{folder}?dtype={dtype}&device={device}&batch_size={batch}")
    backend.lm  # noqa: B018 - load before timing
    params = GenParams(max_tokens=max_tokens)
    requests = [
        ChatRequest(messages=[Message(role="user", content=t)], params=params) for t in texts
    ]
    model = Model(backend)  # no cache: every answer is generated
    # Warm up (CUDA kernels, allocator) as lm-eval, which runs second, finds them warm.
    asyncio.run(model.generate([r.model_copy(update={"sample": 1}) for r in requests[:2]]))
    started = time.perf_counter()
    answers = asyncio.run(model.generate(requests))
    elapsed = time.perf_counter() - started
    failed = [a.error for a in answers if a.error]
    if failed:
        raise SystemExit(f"gramagents failed: {failed[0]}")
    return elapsed, [a.text for a in answers], backend.lm.tokenizer


def theirs(folder: Path, dtype: str, device: str, batch: int, texts: list[str], max_tokens: int):
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-generate-"))
    data = work / "prompts.jsonl"
    data.write_text("".join(json.dumps({"prompt": t}, ensure_ascii=False) + "\n" for t in texts))
    (work / "gramagents_generate.yaml").write_text(
        TASK_YAML.format(data=data, max_tokens=max_tokens)
    )
    model = HFLM(pretrained=str(folder), dtype=dtype, batch_size=batch, device=device)
    manager = TaskManager(include_path=str(work))
    started = time.perf_counter()
    results = simple_evaluate(
        model=model,
        tasks=["gramagents_generate"],
        task_manager=manager,
        log_samples=True,
        apply_chat_template=True,
    )
    elapsed = time.perf_counter() - started
    samples = sorted(results["samples"]["gramagents_generate"], key=lambda s: s["doc_id"])
    return elapsed, [s["resps"][0][0] for s in samples]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=512)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--dtype", default=None, help="default: bfloat16 on CUDA, else float32")
    parser.add_argument("--model-folder", type=Path, default=None)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = args.dtype or ("bfloat16" if device == "cuda" else "float32")
    where = torch.cuda.get_device_name(0) if device == "cuda" else f"cpu x{os.cpu_count()}"

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-generate-"))
    texts = questions(work, args.prompts)
    if args.model_folder is None:
        from gramagents.models.embedded import GGUF_FILE, embedded_folder
        from gramagents.models.hf_load import converted_gguf_folder

        folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    else:
        folder = args.model_folder

    ours_s, ours_texts, tokenizer = ours(
        folder, dtype, device, args.batch_size, texts, args.max_tokens
    )
    theirs_s, theirs_texts = theirs(folder, dtype, device, args.batch_size, texts, args.max_tokens)

    def tokens(outputs: list[str]) -> int:
        return sum(len(tokenizer(o, add_special_tokens=False)["input_ids"]) for o in outputs)

    ours_tokens, theirs_tokens = tokens(ours_texts), tokens(theirs_texts)
    same = sum(a.strip() == b.strip() for a, b in zip(ours_texts, theirs_texts, strict=True))
    print(f"device: {where}; model: {folder.name}; {dtype}; batch {args.batch_size}")
    print(
        f"gramagents: {ours_tokens / ours_s:8.1f} tokens/s ({ours_tokens} tokens, "
        f"{len(texts) / ours_s:.1f} answers/s, {ours_s:.2f} s)"
    )
    print(
        f"lm-eval:    {theirs_tokens / theirs_s:8.1f} tokens/s ({theirs_tokens} tokens, "
        f"{len(texts) / theirs_s:.1f} answers/s, {theirs_s:.2f} s)"
    )
    ratio = (ours_tokens / ours_s) / (theirs_tokens / theirs_s)
    print(f"identical answers: {same}/{len(texts)}; tokens/s ratio {ratio:.2f}")
    ok = ratio >= TARGET
    print(f"RESULT generate_speedup {ratio:.2f} x target >= {TARGET:g} {'pass' if ok else 'fail'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
