"""int8 weights for a model's linear layers, computed with torch's own int8 matrix product.

`dtype=int8` keeps activations in float32 and stores each linear layer's weight as int8 with
one scale per output channel. At each call the input is quantized to int8 with one scale per
row (token), multiplied by `torch._int_mm` (oneDNN's int8 GEMM on x86: about twice float32's
rate on AVX2, three to four times with AVX-512 VNNI), and scaled back to float32.

Two choices make the answers independent of where and with what they are computed:

- one scale per row: a row's result never depends on the other rows of its batch (a whole-
  tensor scale, as `torch.ao.quantization.quantize_dynamic` uses, changes a prompt's answer
  with the prompts it is batched with);
- weights on 64 levels each side (7 bits): on CPUs without VNNI, oneDNN's int8 GEMM adds
  pairs of products in 16 bits and saturates when a weight reaches 127; within ±64 it cannot,
  so the integer product is exact, the same on AVX2, AVX-512 and VNNI machines.

The embeddings (and the output projection, when it shares their weight) stay float32.
"""

from __future__ import annotations

from typing import Any

import torch

WEIGHT_LEVELS = 64
"""Largest weight magnitude after quantization: the integer product stays exact (above)."""
ACTIVATION_LEVELS = 127


class Int8Linear(torch.nn.Module):
    """A linear layer whose weight is int8 per output channel; inputs quantized per row."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        weight = linear.weight.detach().float()
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
        scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / ACTIVATION_LEVELS
        quantized = torch.round(rows / scale).to(torch.int8)
        out = torch._int_mm(quantized, self.weight_int8).float()
        out.mul_(scale).mul_(self.weight_scale)
        if self.bias is not None:
            out.add_(self.bias)
        return out.reshape(*x.shape[:-1], self.out_features)


def quantize_linears(model: Any) -> int:
    """Replace every `nn.Linear` of `model` by an `Int8Linear`, in place; returns how many.

    A linear layer whose weight is an embedding's too (a tied output projection) is left in
    float32: its weight stays shared, and the model's logits keep their precision.
    """
    embeddings = {
        id(module.weight) for module in model.modules() if isinstance(module, torch.nn.Embedding)
    }
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear) and id(child.weight) not in embeddings:
                setattr(parent, name, Int8Linear(child))
                replaced += 1
    return replaced
