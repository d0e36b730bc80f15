"""The embedded SmolLM2 through the hf backend, checked against plain transformers calls."""

import asyncio
from pathlib import Path

import pytest
import torch
from pydantic import BaseModel

from gramagents.models import Model, create_backend
from gramagents.models.embedded import GGUF_FILE, embedded_folder
from gramagents.models.hf_load import converted_gguf_folder
from gramagents.records import ChatRequest, GenParams, LoglikelihoodRequest, Message

pytestmark = pytest.mark.slow

PROMPTS = [
    "Does the sentence 'She can swim.' contain the grammar point [can for ability]? Answer T or F.",
    "请判断：在句子“我会说一点儿中文。”中，是否包含语法点[能愿动词：会]?",
    "Name a colour.",
]


@pytest.fixture(scope="module")
def fp32():
    backend = create_backend("smollm2?dtype=float32&batch_size=4")
    backend.lm  # noqa: B018 - load now
    return backend


@pytest.fixture(scope="module")
def reference():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    return tokenizer, model


def test_the_gguf_is_converted_once_and_gives_the_same_logits(reference):
    from transformers import AutoModelForCausalLM

    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    assert (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()
    tokenizer, converted = reference
    original = AutoModelForCausalLM.from_pretrained(
        embedded_folder(), gguf_file=GGUF_FILE, dtype=torch.float32
    ).eval()
    ids = tokenizer("The cat sat on the mat.", return_tensors="pt").input_ids
    with torch.inference_mode():
        assert torch.allclose(original(ids).logits, converted(ids).logits, atol=1e-4)


def test_identity_names_the_gguf_content_and_dtype(smollm2):
    identity = smollm2.identity()
    assert identity["model"] == f"smollm2:{GGUF_FILE}"
    assert len(identity["revision"]) == 64
    assert identity["dtype"] in ("bfloat16", "int8", "float32")


def test_batched_generation_matches_one_by_one_transformers(fp32, reference):
    tokenizer, model = reference
    requests = [
        ChatRequest(messages=[Message(role="user", content=p)], params=GenParams(max_tokens=12))
        for p in PROMPTS
    ]
    ours = asyncio.run(Model(fp32).generate(requests))
    for prompt, generation in zip(PROMPTS, ours, strict=True):
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        with torch.inference_mode():
            out = model.generate(
                ids, max_new_tokens=12, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )
        expected = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        assert generation.text == expected.rstrip("\ufffd")
        assert generation.prompt_tokens == ids.shape[1]
        assert generation.finish_reason in ("stop", "length")


def test_stop_strings_end_the_completion(fp32):
    request = ChatRequest(
        messages=[Message(role="user", content="Count: 1, 2, 3, 4, 5, 6")],
        params=GenParams(max_tokens=24, stop=(",",)),
    )
    [generation] = asyncio.run(Model(fp32).generate([request]))
    assert "," not in generation.text


def direct_logprob(tokenizer, model, context: str, continuation: str) -> tuple[float, int]:
    prefix = (
        tokenizer(context, add_special_tokens=False).input_ids
        if context
        else [tokenizer.bos_token_id]
    )
    target = tokenizer(continuation, add_special_tokens=False).input_ids
    ids = torch.tensor([prefix + target])
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(ids).logits[0, :-1].float(), dim=-1)
    picked = logprobs[len(prefix) - 1 :].gather(1, torch.tensor(target).unsqueeze(1))
    return float(picked.sum()), len(target)


def test_loglikelihood_matches_a_direct_computation(fp32, reference):
    tokenizer, model = reference
    pairs = [
        ("", "She goes to school every day."),
        ("", "She go to school every day."),
        ("The capital of France is", " Paris"),
        ("我今天", "很高兴。"),
    ]
    scored = asyncio.run(
        Model(fp32).loglikelihood(
            [LoglikelihoodRequest(context=c, continuation=x) for c, x in pairs]
        )
    )
    for (context, continuation), result in zip(pairs, scored, strict=True):
        expected, count = direct_logprob(tokenizer, model, context, continuation)
        assert result.n_tokens == count
        assert result.logprob == pytest.approx(expected, abs=1e-3)
        assert result.mean_logprob == pytest.approx(expected / count, abs=1e-3)
    assert scored[0].logprob > scored[1].logprob


class Verdict(BaseModel):
    contains_point: bool
    reason: str


def test_structured_output_from_the_real_model_is_valid(smollm2):
    model = Model(smollm2)
    result = asyncio.run(
        model.structured(
            ChatRequest(
                messages=[
                    Message(
                        role="user",
                        content="Grammar point: present perfect.\nSentence: I have eaten.\n"
                        "Does the sentence contain the grammar point?",
                    )
                ],
                params=GenParams(max_tokens=24),
            ),
            Verdict,
        )
    )
    assert result.ok, result.error
    assert isinstance(result.value.contains_point, bool) and result.value.reason
    assert result.raw[0].startswith('{"contains_point": ')


def test_a_missing_local_model_is_a_clear_error(tmp_path: Path):
    from gramagents.errors import BackendUnavailable

    backend = create_backend(f"hf:{tmp_path / 'nothing-here'}")
    with pytest.raises(BackendUnavailable, match="cannot load model"):
        asyncio.run(backend.check())
