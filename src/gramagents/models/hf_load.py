"""Loading local transformers models once per process, and GGUF files fast after the first time.

transformers reads a GGUF file by parsing its metadata several times and dequantizing every
tensor, which costs many seconds at each start. The first load of a GGUF file here saves the
dequantized weights, config and tokenizer as a plain model folder under
`$GRAMAGENTS_HOME/models/gguf-<sha256 prefix>/` (written to a temporary folder, then renamed);
later loads read that folder directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import BackendUnavailable, MissingDependency
from ..runtime.paths import home

log = logging.getLogger("gramagents")
_LOADED: dict[tuple[str, ...], LoadedLM] = {}
_LOCK = threading.Lock()


@dataclass
class LoadedLM:
    """A model and tokenizer ready for batched use."""

    model: Any
    tokenizer: Any
    device: Any
    dtype: Any
    has_chat_template: bool
    max_length: int


def cpu_flags() -> set[str]:
    """The CPU's feature flags (Linux's `/proc/cpuinfo`); empty elsewhere."""
    if sys.platform != "linux":
        return set()
    try:
        text = Path("/proc/cpuinfo").read_text(errors="ignore")
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def isa_capped() -> bool:
    """Whether the environment keeps torch or oneDNN from bfloat16 instructions.

    `ATEN_CPU_CAPABILITY` (torch's own kernels: below `avx512`) and `ONEDNN_MAX_CPU_ISA`
    (oneDNN's bfloat16 and int8 matrix products: below `AVX512_CORE_BF16`) are read as torch
    reads them, e.g. to see what a CPU without AVX-512 would do; bfloat16 is slow then.
    """
    aten = os.environ.get("ATEN_CPU_CAPABILITY", "").lower()
    onednn = os.environ.get("ONEDNN_MAX_CPU_ISA", os.environ.get("DNNL_MAX_CPU_ISA", "")).upper()
    onednn_bf16 = onednn in ("", "ALL", "DEFAULT") or any(
        mark in onednn for mark in ("BF16", "AMX", "FP16", "AVX10")
    )
    return bool(aten and not aten.startswith("avx512")) or not onednn_bf16


def _cpu_has_fast_bf16() -> bool:
    flags = cpu_flags()
    return bool(flags & {"avx512_bf16", "amx_bf16"}) and not isa_capped()


def _no_gpu_driver() -> bool:
    """True on Linux when no NVIDIA or ROCm driver is loaded.

    torch then sees no GPU either, and importing it (a second or so) just to learn that can
    be skipped.
    """
    if sys.platform != "linux":
        return False
    return not Path("/proc/driver/nvidia").exists() and not Path("/dev/kfd").exists()


def resolve_device(option: str | None) -> str:
    """`auto` picks CUDA, then MPS, then CPU."""
    if option and option != "auto":
        return option
    if _no_gpu_driver():
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


INT8_SCHEME = "w7-rows8-smooth0.5-v1"
"""What decides `dtype=int8`'s answers (`int8.py`: weight levels, input scales, smoothing and
its calibration text); a change to any of them changes this name, so the cache key."""


def dtype_identity(dtype: str) -> str:
    """The dtype as the cache key names it: int8 with its scheme."""
    return f"int8/{INT8_SCHEME}" if dtype == "int8" else dtype


def resolve_dtype(option: str | None, device: str) -> str:
    """`auto`: bfloat16 where the hardware computes it fast, else int8 weights or float32.

    On a CPU without fast bfloat16, int8 weights (`int8.py`) where it has an int8 GEMM (x86
    with AVX2), else float32.
    `bench/embedded.py` measures the int8 choice: its answers equal float32's for at least
    95 % of the quick start's items.
    """
    if option and option != "auto":
        return option
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    if device == "mps":
        return "float16"
    return "bfloat16" if _cpu_has_fast_bf16() else "float32"


@lru_cache(maxsize=32)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    memo = home() / "models" / "sha256.json"
    key = f"{path}|{size}|{mtime_ns}"
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if key in known:
        return str(known[key])
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    known[key] = digest.hexdigest()
    memo.parent.mkdir(parents=True, exist_ok=True)
    tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(known), encoding="utf-8")
    os.replace(tmp, memo)
    return known[key]


def file_sha256(path: Path) -> str:
    """sha256 of a (large) file, remembered per (path, size, mtime) across processes."""
    st = path.stat()
    return _sha256(path.resolve(), st.st_size, st.st_mtime_ns)


def folder_fingerprint(folder: Path) -> str:
    """A cheap fingerprint of a model folder: names, sizes and mtimes of its files."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = path.stat()
        digest.update(f"{path.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def converted_gguf_folder(folder: Path, gguf_file: str) -> Path:
    """A plain model folder holding the dequantized GGUF, made on first use."""
    gguf_path = folder / gguf_file
    if not gguf_path.is_file():
        raise BackendUnavailable(f"GGUF file not found: {gguf_path}")
    out = home() / "models" / f"gguf-{file_sha256(gguf_path)[:16]}"
    if (out / "config.json").is_file() and (out / "model.safetensors").is_file():
        return out
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting %s once (later loads read %s)", gguf_path.name, out)
    # transformers' dequantization bar is plain tqdm, outside its own progress-bar switch.
    from functools import partial

    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    bar = getattr(gguf_utils, "tqdm", None)
    if bar is not None:
        gguf_utils.tqdm = partial(bar, disable=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf_file)
        model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=gguf_file, dtype=torch.float32
        )
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
    # The dequantized weights are plain tensors; drop the GGUF marker so the folder loads as is.
    model.config.__dict__.pop("quantization_config", None)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    model.config.save_pretrained(tmp)
    model.generation_config.save_pretrained(tmp)
    save_model(model, str(tmp / "model.safetensors"))
    tokenizer.save_pretrained(tmp)
    try:
        os.replace(tmp, out)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _torch_dtype(torch: Any, dtype: str, device: str) -> Any:
    """The torch dtype a model's weights load in (`int8` loads float32, then quantizes)."""
    if dtype == "int8":
        if device != "cpu":
            raise BackendUnavailable(f"dtype int8 runs on the CPU only, not on '{device}'")
        return torch.float32
    floats = ("float32", "bfloat16", "float16", "float64")
    found = getattr(torch, dtype, None) if dtype in floats else None
    if found is None:
        raise BackendUnavailable(
            f"unknown dtype '{dtype}' (use float32, bfloat16, float16 or int8)"
        )
    return found


def load_lm(
    target: str,
    *,
    gguf_file: str | None,
    dtype: str,
    device: str,
    revision: str | None,
) -> LoadedLM:
    """Load (once per process) a causal LM and its tokenizer for batched inference."""
    key = (target, gguf_file or "", dtype, device, revision or "")
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise MissingDependency(exc.name or "transformers", "local models") from None
        source: str | Path = target
        extra: dict[str, Any] = {}
        if Path(target).is_dir():
            extra["local_files_only"] = True  # a local folder never needs the hub
        if gguf_file and Path(target).is_dir():
            source = converted_gguf_folder(Path(target), gguf_file)
        elif gguf_file:
            extra["gguf_file"] = gguf_file
        if revision:
            extra["revision"] = revision
        torch_dtype = _torch_dtype(torch, dtype, device)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, **extra)
            model = AutoModelForCausalLM.from_pretrained(source, dtype=torch_dtype, **extra)
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BackendUnavailable(f"cannot load model '{target}': {first}") from None
        model = model.to(device).eval()  # type: ignore[arg-type]
        if dtype == "int8":
            from .int8 import quantize_linears

            quantize_linears(model, tokenizer)
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        max_length = int(getattr(model.config, "max_position_embeddings", 0) or 2048)
        loaded = LoadedLM(
            model=model,
            tokenizer=tokenizer,
            device=torch.device(device),
            dtype=torch_dtype,
            has_chat_template=bool(getattr(tokenizer, "chat_template", None)),
            max_length=max_length,
        )
        _LOADED[key] = loaded
        return loaded
