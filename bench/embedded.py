"""The embedded SmolLM2 on this CPU: where an eval's time goes, and how near the machine's limit.

On the quick start's dataset (`gramagents build cpg --source examples/cpg/grammar-points.jsonl
--agents off`: 572 items), for each dtype this machine offers (float32; int8 weights; bfloat16
where the CPU has fast bfloat16), one run of the hf backend over every item (length-sorted
batches, no cache, the threads the command line would choose as it starts, kept for the whole
run), split into phases:

- load: reading the converted model folder (and quantizing, for int8);
- prefill: the forward passes over the prompts (prompt tokens/s; the tokens computed, padding
  included, beside them);
- decode: the one-token forward passes (generated tokens/s);
- extraction: reading each reply with its task's extraction chain (replies/s);
- other: the rest of generation (tokenizing, the chat template, generate's bookkeeping).

Beside prefill and decode: the GFLOP/s they reach (2 x the linear layers' weights per token
computed, plus attention) as a share of the machine's peak, measured in the same run by a
plain loop of `torch.matmul` (float32, bfloat16) and `torch._int_mm` (int8) over the model's
own linear shapes, at a prefill batch's rows and at a decode step's. Then, for each dtype, the
share of items whose answer (the extracted value, or invalid and its reason) equals float32's,
and the share whose reply text is the same; `dtype=auto` may pick a dtype other than float32
only where that share is at least 95 %.

It prints the CPU, its flags, the instruction set torch and oneDNN use, and the load average.
A CPU without AVX-512 can be emulated on one with it (the figures then say so):

    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2 \\
        python bench/embedded.py

    python bench/embedded.py [--items N] [--dtypes float32,int8] [--threads N] [--plain]
        [--clock wall|cpu]

On a busy machine, `--threads 1 --clock cpu` times every phase and the peak by this process's
CPU time instead of the wall clock: what one quiet core would take, roughly (memory and
caches are still shared).

`--plain` also times plain transformers (loading from the GGUF, a `generate` loop in dataset
order) against the hf backend on the same items, as earlier rounds of this bench did.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
AGREEMENT_TARGET = 0.95
ISA_VARIABLES = (
    "ATEN_CPU_CAPABILITY",
    "ONEDNN_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
    "FBGEMM_ENABLE_INSTRUCTIONS",
)
CLOCK = time.perf_counter
"""What phases are timed by: the wall clock, or this process's CPU time (`--clock cpu`, for a
busy machine with `--threads 1`: the CPU time one thread takes is what a quiet core takes)."""
SHOWN_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")


@dataclass
class Phases:
    """Seconds and tokens of each phase of one dtype's run."""

    load_s: float = 0.0
    prefill_s: float = 0.0
    prefill_computed: int = 0
    prefill_flops: float = 0.0
    decode_s: float = 0.0
    decode_computed: int = 0
    decode_flops: float = 0.0
    generate_s: float = 0.0
    extraction_s: float = 0.0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    answers: list[tuple[Any, ...]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)


def machine() -> str:
    """CPU model, its flags of interest, and the ISA torch and oneDNN were told to use."""
    import torch

    from gramagents.models.hf_load import cpu_flags

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="ignore").splitlines():
            if line.startswith("model name"):
                name = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    flags = cpu_flags()
    shown = " ".join(f for f in SHOWN_FLAGS if f in flags) or "(none of interest)"
    capped = {v: os.environ[v] for v in ISA_VARIABLES if v in os.environ}
    lines = [
        f"cpu: {name}, {os.cpu_count()} cores; flags: {shown}",
        f"torch {torch.__version__}: kernels {torch.backends.cpu.get_cpu_capability()}, "
        f"oneDNN {onednn_isa()}",
    ]
    if capped:
        lines.append(
            "EMULATED: instruction sets capped by "
            + ", ".join(f"{k}={v}" for k, v in capped.items())
            + " (this CPU has more; clock, caches and memory are still this machine's)"
        )
    return "\n".join(lines)


def onednn_isa() -> str:
    """The ISA oneDNN dispatches to, from its verbose line (run in a child process)."""
    import subprocess

    code = "import torch; a = torch.ones(8, 8, dtype=torch.int8); torch._int_mm(a, a)"
    env = {**os.environ, "ONEDNN_VERBOSE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    ).stdout
    for line in out.splitlines():
        if ",isa:" in line:
            return line.split(",isa:", 1)[1].strip()
    return "unknown"


def linear_shapes(model: Any) -> list[tuple[int, int]]:
    """(in, out) of each linear layer a token passes through, the output projection apart."""
    import torch

    shapes = []
    for name, module in model.named_modules():
        if name.endswith("lm_head"):
            continue
        if isinstance(module, torch.nn.Linear) or hasattr(module, "weight_int8"):
            shapes.append((module.in_features, module.out_features))
    return shapes


def measure_peak(shapes: list[tuple[int, int]], rows: int, kind: str, seconds: float) -> float:
    """GFLOP/s of a plain matrix-product loop over `shapes` with `rows` rows, in `kind`."""
    import torch

    pairs = []
    for k, n in sorted(set(shapes)):
        if kind == "int8":
            x = torch.randint(-127, 128, (rows, k), dtype=torch.int8)
            w = torch.randint(-64, 65, (k, n), dtype=torch.int8)
        else:
            dtype = getattr(torch, kind)
            x, w = torch.randn(rows, k).to(dtype), torch.randn(k, n).to(dtype)
        pairs.append((x, w, shapes.count((k, n))))
    product = torch._int_mm if kind == "int8" else torch.matmul
    flops, spent = 0.0, 0.0
    with torch.inference_mode():
        for x, w, count in pairs:
            product(x, w)  # warm
            started, clocked, n = time.perf_counter(), CLOCK(), 0
            while time.perf_counter() - started < seconds / len(pairs):
                product(x, w)
                n += 1
            spent += (CLOCK() - clocked) / n * count
            flops += 2.0 * rows * x.shape[1] * w.shape[1] * count
    return flops / spent / 1e9


def flops_per_token(model: Any, context: float) -> float:
    """Linear layers (2 x weights) plus attention over `context` earlier tokens.

    The output projection is counted apart (`head_flops`): it runs for the last position only.
    """
    config = model.config
    linear = sum(2.0 * k * n for k, n in linear_shapes(model))
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    return linear + 4.0 * config.num_hidden_layers * heads * head_dim * context


def head_flops(model: Any) -> float:
    """The output projection's 2 x weights (hidden size x vocabulary), per position it scores."""
    return 2.0 * model.config.hidden_size * model.config.vocab_size


def instrument(model: Any, phases: Phases) -> list[Any]:
    """Hooks timing each forward pass as prefill (several positions) or decode (one).

    On the model and on its body (the model without its output head): prompts are computed
    on the body directly (`hf_prefix.prefilled`), `generate`'s steps on the whole model. A
    pass is timed once, by the outermost of the two it enters; the output projection is
    counted for each row of a whole-model pass (one position per row: its last).
    """
    body = getattr(model, "base_model", None) or model
    state: dict[str, Any] = {"depth": 0}

    def before(module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        state["depth"] += 1
        if state["depth"] > 1:
            return  # the body inside a whole-model pass: timed by the model's hooks
        ids = kwargs.get("input_ids")
        if ids is None and args:
            ids = args[0]
        mask = kwargs.get("attention_mask")
        state["shape"] = tuple(ids.shape)
        state["context"] = mask.shape[1] if mask is not None else ids.shape[1]
        state["started"] = CLOCK()

    def after(module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> None:
        state["depth"] -= 1
        if state["depth"] > 0:
            return
        elapsed = CLOCK() - state["started"]
        rows, width = state["shape"]
        head = head_flops(model) if module is model else 0.0
        if width > 1:
            phases.prefill_s += elapsed
            phases.prefill_computed += rows * width
            per_row = width * flops_per_token(model, state["context"] / 2) + head
            phases.prefill_flops += rows * per_row
        else:
            phases.decode_s += elapsed
            phases.decode_computed += rows
            per_row = flops_per_token(model, state["context"]) + head
            phases.decode_flops += rows * per_row

    modules = [model] if body is model else [model, body]
    return [
        hook
        for module in modules
        for hook in (
            module.register_forward_pre_hook(before, with_kwargs=True),
            module.register_forward_hook(after, with_kwargs=True),
        )
    ]


def run_dtype(dtype: str, requests: list[Any], items: list[Any]) -> Phases:
    """Load the model in `dtype`, answer every request, read every reply; timed by phase."""
    from gramagents.models import Model, create_backend
    from gramagents.models.hf_load import _LOADED
    from gramagents.scoring.extract import extract
    from gramagents.tasks import get_task

    phases = Phases()
    _LOADED.clear()
    backend = create_backend(f"smollm2?dtype={dtype}")
    started = CLOCK()
    lm = backend.lm
    phases.load_s = CLOCK() - started
    phases.prompt_tokens = sum(len(backend.render(r)) for r in requests)
    hooks = instrument(lm.model, phases)
    started = CLOCK()
    answers = asyncio.run(Model(backend).generate(requests))
    phases.generate_s = CLOCK() - started
    for hook in hooks:
        hook.remove()
    phases.generated_tokens = sum(a.completion_tokens or 0 for a in answers)
    started = CLOCK()
    for item, request, answer in zip(items, requests, answers, strict=True):
        known = {**item.prompt.vars, **item.meta}
        read = extract(get_task(item.task).extractor, answer.text, known, request.messages)
        phases.answers.append((read.value, read.rule if read.invalid else "", read.reason))
        phases.replies.append(answer.text)
    phases.extraction_s = CLOCK() - started
    return phases


def share(value: float, peak: float) -> str:
    return f"{100 * value / peak:.0f} %" if peak > 0 else "-"


def report(dtype: str, p: Phases, peaks: dict[str, tuple[float, float]]) -> None:
    """Print one dtype's phases, against the float32 and int8 peaks (and its own)."""
    items = len(p.answers)
    other = p.generate_s - p.prefill_s - p.decode_s
    print(
        f"dtype {dtype}: {items} items in {p.generate_s + p.extraction_s:.1f} s "
        f"({items / (p.generate_s + p.extraction_s):.2f} items/s), load {p.load_s:.2f} s"
    )
    own = peaks.get(dtype, peaks["float32"])
    for phase, seconds, tokens, computed, flops, at in (
        ("prefill", p.prefill_s, p.prompt_tokens, p.prefill_computed, p.prefill_flops, 0),
        ("decode", p.decode_s, p.generated_tokens, p.decode_computed, p.decode_flops, 1),
    ):
        rate = flops / seconds / 1e9 if seconds else 0.0
        print(
            f"  {phase:8s} {seconds:7.1f} s  {tokens / seconds if seconds else 0:8.0f} tokens/s "
            f"({tokens} tokens; {computed} computed)  {rate:6.1f} GFLOP/s = "
            f"{share(rate, peaks['float32'][at])} of the float32 peak, "
            f"{share(rate, peaks['int8'][at])} of int8's"
            + (f", {share(rate, own[at])} of {dtype}'s" if dtype not in ("float32", "int8") else "")
        )
    print(f"  extraction {p.extraction_s:5.2f} s  {items / p.extraction_s:8.0f} replies/s")
    print(f"  other    {other:7.1f} s  (tokenizing, chat template, generate's bookkeeping)")


def agreement(p: Phases, reference: Phases) -> tuple[float, float]:
    """Shares of items with the same answer and with the same reply as `reference`."""
    n = len(reference.answers)
    same = sum(a == b for a, b in zip(p.answers, reference.answers, strict=True))
    text = sum(a == b for a, b in zip(p.replies, reference.replies, strict=True))
    return same / n, text / n


def quick_start_requests(limit: int | None) -> tuple[list[Any], list[Any]]:
    """The quick start's items (the example CPG build, no agents) and their chat requests."""
    from gramagents.records import ChatRequest
    from gramagents.tasks import get_task
    from gramagents.templates import load_prompt
    from gramagents.workflow.build import BuildOptions, run_build

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-embedded-"))
    source = ROOT / "examples" / "cpg" / "grammar-points.jsonl"
    build = asyncio.run(
        run_build("cpg", BuildOptions(source=source, agents=False, run_dir=work / "data"))
    )
    items = build.items[:limit] if limit else build.items
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
    return items, requests


def offered_dtypes() -> list[str]:
    """float32 and int8 everywhere; bfloat16 where `dtype=auto` would pick it."""
    from gramagents.models.hf_load import resolve_dtype

    offered = ["float32", "int8"]
    if resolve_dtype("auto", "cpu") == "bfloat16":
        offered.append("bfloat16")
    return offered


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=None, help="the first N items (all: 572)")
    parser.add_argument("--dtypes", default=None, help="comma-separated; float32 always runs")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (as --threads)")
    parser.add_argument("--peak-s", type=float, default=2.0, help="seconds per peak measure")
    parser.add_argument("--plain", action="store_true", help="also time plain transformers")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    from gramagents.process import QUIET

    for name, value in QUIET.items():  # as the command line runs: no bars, no advice
        os.environ.setdefault(name, value)
    os.environ["GRAMAGENTS_CACHE"] = str(Path(tempfile.mkdtemp()) / "unused.sqlite")
    from gramagents.models.hf_load import resolve_dtype
    from gramagents.runtime.threads import apply_threads, stop_following

    threads = apply_threads(args.threads)
    stop_following()  # the runs and the peak all at the threads chosen now
    import torch

    torch.set_grad_enabled(False)
    print(machine())
    print(
        f"clock: {args.clock}; threads {torch.get_num_threads()} (chosen {threads}); "
        f"load average at start "
        f"{os.getloadavg()[0]:.2f}; dtype=auto picks {resolve_dtype('auto', 'cpu')} here"
    )
    dtypes = ["float32"] + [
        d for d in (args.dtypes.split(",") if args.dtypes else offered_dtypes()) if d != "float32"
    ]
    items, requests = quick_start_requests(args.items)
    results = {dtype: run_dtype(dtype, requests, items) for dtype in dtypes}
    from gramagents.models import create_backend
    from gramagents.models.hf_load import _LOADED

    model = next(iter(_LOADED.values())).model
    shapes = linear_shapes(model)
    rows = 2048  # a prefill run: 16 prompts of about 128 tokens
    decode_rows = create_backend("smollm2").batch_size  # a decoding step's rows, as run here
    peaks = {
        kind: tuple(measure_peak(shapes, r, kind, args.peak_s / 2) for r in (rows, decode_rows))
        for kind in {"float32", "int8", *dtypes}
    }
    print(
        "peak, plain matrix-product loop over the model's linear shapes "
        f"({len(set(shapes))} shapes; {rows} rows as in prefill, {decode_rows} as in a decode "
        "step): "
        + "; ".join(f"{k} {v[0]:.0f} / {v[1]:.0f} GFLOP/s" for k, v in sorted(peaks.items()))
        + " (int8: torch._int_mm)"
    )
    for dtype, phases in results.items():
        report(dtype, phases, peaks)
    verdict = summary(results, resolve_dtype("auto", "cpu"))
    if args.plain:
        plain(requests)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(verdict)
    return 0


def summary(results: dict[str, Phases], auto: str) -> str:
    """Each dtype against float32; the RESULT line: is `dtype=auto`'s choice one that held?

    A default other than float32 must give float32's answer for at least 95 % of the items.
    """
    reference = results["float32"]
    n = len(reference.answers)
    total = reference.generate_s + reference.extraction_s
    parts = []
    for dtype, phases in results.items():
        if dtype == "float32":
            continue
        answers, texts = agreement(phases, reference)
        speed = total / (phases.generate_s + phases.extraction_s)
        held = answers >= AGREEMENT_TARGET
        print(
            f"{dtype} against float32: answers equal {100 * answers:.1f} % "
            f"({round(answers * n)}/{n}), replies equal {100 * texts:.1f} %; "
            f"{speed:.2f}x float32's items/s; "
            f"{'may be a default' if held else 'may not be a default'} (>= 95 %)"
        )
        parts.append(f"{dtype} {speed:.2f}x at {100 * answers:.1f} % equal")
    ok = auto == "float32" or (
        auto in results and agreement(results[auto], reference)[0] >= AGREEMENT_TARGET
    )
    return (
        f"RESULT embedded_auto_dtype {auto} ({'; '.join(parts) or 'nothing else run'}) "
        f"target: a default other than float32 >= {100 * AGREEMENT_TARGET:.0f} % equal "
        f"{'pass' if ok else 'fail'}"
    )


def plain(requests: list[Any]) -> None:
    """Plain transformers: load from the GGUF, generate in dataset order, batches of 16."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gramagents.models.embedded import GGUF_FILE, embedded_folder

    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(embedded_folder(), gguf_file=GGUF_FILE)
    model = AutoModelForCausalLM.from_pretrained(embedded_folder(), gguf_file=GGUF_FILE).eval()
    load = time.perf_counter() - started
    tokenizer.padding_side = "left"
    started = time.perf_counter()
    for start in range(0, len(requests), 16):
        batch_requests = requests[start : start + 16]
        texts = [
            tokenizer.apply_chat_template(
                [m.model_dump() for m in r.messages], tokenize=False, add_generation_prompt=True
            )
            for r in batch_requests
        ]
        batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        with torch.inference_mode():
            model.generate(
                **batch,
                max_new_tokens=max(r.params.max_tokens for r in batch_requests),
                do_sample=False,
                pad_token_id=tokenizer.pad_token_id,
            )
    rate = len(requests) / (time.perf_counter() - started)
    print(f"plain transformers (float32, from the GGUF): load {load:.2f} s, {rate:.2f} items/s")


if __name__ == "__main__":
    sys.exit(main())
