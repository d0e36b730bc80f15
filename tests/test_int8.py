"""int8 linear layers (`dtype=int8`) and how `dtype=auto` chooses per machine."""

from __future__ import annotations

import asyncio

import pytest
import torch

from gramagents.errors import BackendUnavailable
from gramagents.models import hf_load
from gramagents.models.int8 import WEIGHT_LEVELS, Int8Linear, quantize_linears


@pytest.fixture
def linear() -> torch.nn.Linear:
    torch.manual_seed(0)
    layer = torch.nn.Linear(96, 40)
    layer.weight.data[:, 3] *= 20  # an outlier input channel, as language models have
    return layer


def test_an_int8_layer_computes_what_the_float_layer_does_within_its_rounding(linear):
    x = torch.randn(5, 7, 96)
    with torch.inference_mode():
        exact, approx = linear(x), Int8Linear(linear)(x)
    assert approx.shape == exact.shape and approx.dtype == torch.float32
    error = (approx - exact).norm() / exact.norm()
    assert error < 0.05


def test_a_rows_result_does_not_depend_on_the_rows_batched_with_it(linear):
    quantized = Int8Linear(linear)
    row = torch.randn(1, 96)
    loud = torch.randn(15, 96) * 1000  # a whole-batch scale would crush the quiet row
    with torch.inference_mode():
        alone = quantized(row)
        batched = quantized(torch.cat([loud[:7], row, loud[7:]]))[7:8]
    assert torch.equal(alone, batched)


def test_weights_stay_within_the_levels_whose_integer_product_is_exact(linear):
    quantized = Int8Linear(linear)
    assert quantized.weight_int8.abs().max() == WEIGHT_LEVELS
    x = torch.randint(-127, 128, (4, 96), dtype=torch.int8)
    w = quantized.weight_int8
    assert torch.equal(torch._int_mm(x, w), x.int() @ w.int())


def test_smoothing_by_the_input_ranges_brings_an_outlier_channels_rows_closer():
    torch.manual_seed(1)
    layer = torch.nn.Linear(64, 32)
    x = torch.randn(50, 64)
    x[:, 5] *= 60  # one input channel far larger than the rest, in every row
    with torch.inference_mode():
        exact = layer(x)
        plain = (Int8Linear(layer)(x) - exact).norm()
        smoothed = (Int8Linear(layer, x.abs().amax(dim=0))(x) - exact).norm()
    assert smoothed < 0.7 * plain


def test_every_linear_layer_is_replaced_but_one_sharing_an_embeddings_weight():
    embed = torch.nn.Embedding(50, 16)
    head = torch.nn.Linear(16, 50, bias=False)
    head.weight = embed.weight  # tied, as SmolLM2's output projection is
    model = torch.nn.ModuleDict(
        {"embed": embed, "block": torch.nn.Sequential(torch.nn.Linear(16, 16)), "head": head}
    )
    assert quantize_linears(model) == 1
    assert isinstance(model["block"][0], Int8Linear) and model["head"] is head


@pytest.mark.parametrize(
    ("flags", "env", "chosen"),
    [
        ({"avx2", "avx512f", "avx512_bf16"}, {}, "bfloat16"),
        ({"avx2", "avx512f", "avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "AVX2"}, "float32"),
        ({"avx2", "avx512f", "avx512_bf16"}, {"ATEN_CPU_CAPABILITY": "avx2"}, "float32"),
        ({"avx2", "avx512f", "avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}, "float32"),
        ({"avx2", "avx512f", "avx512_bf16"}, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX"}, "bfloat16"),
        ({"avx2", "avx512f", "avx512_bf16"}, {"ATEN_CPU_CAPABILITY": "avx512"}, "bfloat16"),
        ({"avx2", "fma"}, {}, "float32"),
        (set(), {}, "float32"),
    ],
)
def test_auto_picks_by_the_cpu_and_the_instruction_sets_it_may_use(monkeypatch, flags, env, chosen):
    monkeypatch.setattr(hf_load, "cpu_flags", lambda: flags)
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert hf_load.resolve_dtype("auto", "cpu") == chosen
    assert hf_load.resolve_dtype("float32", "cpu") == "float32"  # given: it decides


def test_int8_is_for_the_cpu_and_an_unknown_dtype_is_one_error():
    with pytest.raises(BackendUnavailable, match="int8 runs on the CPU only"):
        hf_load._torch_dtype(torch, "int8", "cuda")
    with pytest.raises(BackendUnavailable, match="unknown dtype 'uint8'"):
        hf_load._torch_dtype(torch, "uint8", "cpu")


@pytest.mark.slow
def test_the_embedded_model_in_int8_answers_and_is_cached_apart_from_float32():
    from gramagents.models import Model, create_backend
    from gramagents.records import ChatRequest, GenParams, Message

    int8 = create_backend("smollm2?dtype=int8")
    fp32 = create_backend("smollm2?dtype=float32")
    assert int8.identity()["dtype"].startswith("int8/") and int8.identity() != fp32.identity()
    layers = [m for m in int8.lm.model.modules() if isinstance(m, Int8Linear)]
    assert len(layers) == 7 * int8.lm.model.config.num_hidden_layers
    assert all(layer.input_divisor is not None for layer in layers)  # smoothed at load
    request = ChatRequest(
        messages=[Message(role="user", content="Name a colour.")],
        params=GenParams(max_tokens=8),
    )
    [answer] = asyncio.run(Model(int8).generate([request]))
    assert answer.error is None and answer.text.strip()
