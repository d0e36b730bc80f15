"""int8 weights for a model's linear layers, computed with torch's own int8 matrix product.

`dtype=int8` keeps activations in float32 and stores each linear layer's weight as int8 with
one scale per output channel. At each call the input is quantized to int8 with one scale per
row (token), multiplied by `torch._int_mm` (oneDNN's int8 GEMM on x86: about twice float32's
rate on AVX2, three to four times with AVX-512 VNNI), and scaled back to float32.

Two choices keep the int8 part of the result exact and local:

- one scale per row: a row's result never depends on the other rows of its batch (a whole-
  tensor scale, as `torch.ao.quantization.quantize_dynamic` uses, changes a prompt's answer
  with the prompts it is batched with);
- weights on 64 levels each side (7 bits): on CPUs without VNNI, oneDNN's int8 GEMM adds
  pairs of products in 16 bits and saturates when a weight reaches 127; within ±64 it cannot,
  so the integer product is exact, the same on AVX2, AVX-512 and VNNI machines (the float
  parts around it, attention and norms, still round as each CPU's kernels do).

Language models' activations have a few input channels far larger than the rest, and one
scale per row spends the int8 levels on those. As SmoothQuant (Xiao et al., 2023) does, each
input channel is divided by `s = range(x)^0.5 / range(w)^0.5` and its weights multiplied by
it (the product is unchanged), which moves half of that spread into the weights; the ranges
of `x` come from one float32 pass over a fixed calibration text (`CALIBRATION`) at load time.

The embeddings (and the output projection, when it shares their weight) stay float32.
"""

from __future__ import annotations

from typing import Any

import torch

WEIGHT_LEVELS = 64
"""Largest weight magnitude after quantization: the integer product stays exact (above)."""
ACTIVATION_LEVELS = 127
SMOOTHING = 0.5
"""How much of an input channel's range moves into the weights (SmoothQuant's alpha)."""
CALIBRATION = (
    "Grammar describes how words combine into sentences. Does the sentence 'She can swim.' "
    "contain the grammar point [can for ability]? Answer T or F.",
    "请判断：在句子“我会说一点儿中文。”中，是否包含语法点[能愿动词：会]? 如果包含，请仅回答T",
    "Le chat dort sur le canapé. Der Hund läuft schnell nach Hause. ¿Dónde está la biblioteca?",
    "1. T 2. F 3. T\nAnswer with the letter of the best option: A, B, C or D.",
)
"""Text whose activations set each layer's input ranges: a few languages, the shapes of
questions and answers the benchmarks ask (changing it changes `hf_load.INT8_SCHEME`)."""


class Int8Linear(torch.nn.Module):
    """A linear layer whose weight is int8 per output channel; inputs quantized per row."""

    def __init__(self, linear: torch.nn.Linear, input_range: torch.Tensor | None = None) -> None:
        super().__init__()
        weight = linear.weight.detach().float()
        smooth = None
        if input_range is not None:  # SmoothQuant: x / s and w * s per input channel
            spread = input_range.float().clamp(min=1e-5) ** SMOOTHING
            smooth = (spread / weight.abs().amax(dim=0).clamp(min=1e-5) ** (1 - SMOOTHING)).clamp(
                min=1e-5
            )
            weight = weight * smooth[None, :]
        self.register_buffer("input_divisor", smooth)
        scale = weight.abs().amax(dim=1).clamp(min=1e-12) / WEIGHT_LEVELS
        quantized = torch.round(weight / scale[:, None]).clamp(-WEIGHT_LEVELS, WEIGHT_LEVELS)
        # (in, out) as torch._int_mm takes it, contiguous for oneDNN
        self.register_buffer("weight_int8", quantized.to(torch.int8).t().contiguous())
        self.register_buffer("weight_scale", scale)
        self.bias = linear.bias
        self.in_features = linear.in_features
        self.out_features = linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """`x @ weight.T + bias`, with both factors in int8."""
        rows = x.reshape(-1, self.in_features).float()
        if self.input_divisor is not None:
            rows = rows / self.input_divisor
        scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / ACTIVATION_LEVELS
        quantized = torch.round(rows / scale).to(torch.int8)
        out = torch._int_mm(quantized, self.weight_int8).float()
        out.mul_(scale).mul_(self.weight_scale)
        if self.bias is not None:
            out.add_(self.bias)
        return out.reshape(*x.shape[:-1], self.out_features)


def _quantized(model: Any) -> dict[str, torch.nn.Linear]:
    """The linear layers to quantize, by name: all but one sharing an embedding's weight."""
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    return {
        name: module
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.Linear) and id(module.weight) not in embeddings
    }


def input_ranges(model: Any, batches: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    """Largest |input| per channel of each layer to quantize, over float32 passes on `batches`."""
    ranges: dict[str, torch.Tensor] = {}

    def note(name: str) -> Any:
        def hook(module: Any, args: Any, output: Any) -> None:
            seen = args[0].detach().reshape(-1, args[0].shape[-1]).abs().amax(dim=0).float()
            ranges[name] = torch.maximum(ranges[name], seen) if name in ranges else seen

        return hook

    hooks = [m.register_forward_hook(note(n)) for n, m in _quantized(model).items()]
    try:
        with torch.inference_mode():
            for ids in batches:
                model(input_ids=ids)
    finally:
        for hook in hooks:
            hook.remove()
    return ranges


def calibration_batches(tokenizer: Any) -> list[torch.Tensor]:
    """`CALIBRATION`'s texts as the model reads prompts (its chat template when it has one)."""
    batches = []
    for text in CALIBRATION:
        if getattr(tokenizer, "chat_template", None):
            messages = [{"role": "user", "content": text}]
            text = tokenizer.apply_chat_template(messages, tokenize=False)
        batches.append(torch.tensor([tokenizer(text, add_special_tokens=False).input_ids]))
    return batches


def quantize_linears(model: Any, tokenizer: Any | None = None) -> int:
    """Replace every `nn.Linear` of `model` by an `Int8Linear`, in place; returns how many.

    A linear layer whose weight is an embedding's too (a tied output projection) is left in
    float32: its weight stays shared, and the model's logits keep their precision. With a
    `tokenizer`, each layer is smoothed by its input ranges over `CALIBRATION` first.
    """
    ranges = input_ranges(model, calibration_batches(tokenizer)) if tokenizer else {}
    layers = _quantized(model)
    modules = dict(model.named_modules())
    for name, layer in layers.items():
        parent, _, attribute = name.rpartition(".")
        setattr(modules[parent], attribute, Int8Linear(layer, ranges.get(name)))
    return len(layers)
