import pytest

from gramagents.errors import GramagentsError, SpecError
from gramagents.models import create_backend, parse_spec


def test_spec_strings_parse():
    spec = parse_spec("openai:qwen2.5-7b@http://127.0.0.1:8000/v1?timeout=30")
    assert (spec.backend, spec.target, spec.base_url, spec.options) == (
        "openai",
        "qwen2.5-7b",
        "http://127.0.0.1:8000/v1",
        {"timeout": "30"},
    )
    spec = parse_spec("hf:./models/x?dtype=float32&batch_size=8")
    assert (spec.backend, spec.target, spec.options) == (
        "hf",
        "./models/x",
        {"dtype": "float32", "batch_size": "8"},
    )
    assert parse_spec("smollm2").backend == "smollm2"
    assert parse_spec("hf:org/name@v1").target == "org/name@v1"


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("gpt4", "unknown backend 'gpt4'"),
        ("vllm:foo", "unknown backend 'vllm'"),
        ("hf:", "missing model after 'hf:'"),
        ("smollm2?dtyp=float32", "unknown option 'dtyp'"),
        ("hf:x?batch_size=zero", "batch_size must be a positive integer"),
        ("openai:m@http://h/v1?timeout=soon", "timeout must be a number"),
        ("openai:m@http://h/v1?structured=xml", "structured must be"),
        ("", "empty model spec"),
        ("smollm2?temperature=warm", "temperature must be a number"),
        ("smollm2?temperature=-1", "temperature must be 0 or more"),
        ("openai:m@http://h/v1?seed=1.5", "seed must be an integer"),
        ("hf:x?top_p=0", "top_p must be in (0, 1]"),
    ],
)
def test_bad_specs_are_one_clear_line(spec, words):
    with pytest.raises(SpecError) as caught:
        create_backend(spec)
    assert words in str(caught.value)
    assert str(caught.value).startswith("--model ")


def test_openai_api_without_key_says_which_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(GramagentsError, match="needs OPENAI_API_KEY"):
        create_backend("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert (
        create_backend("openai:gpt-4o-mini").identity()["base_url"] == "https://api.openai.com/v1"
    )


def test_decoding_options_replace_each_requests_decoding():
    import asyncio
    import json

    from pydantic import BaseModel

    from gramagents.models.model import Model
    from gramagents.models.scripted import ScriptedBackend
    from gramagents.records import ChatRequest, GenParams, Message

    class Echo(BaseModel):
        temperature: float
        seed: int | None

    ScriptedBackend.register(
        "echo-params",
        lambda r: json.dumps({"temperature": r.params.temperature, "seed": r.params.seed}),
    )
    plain = Model(create_backend("scripted:echo-params"))
    warm = Model(create_backend("scripted:echo-params?temperature=0.8&seed=3"))
    params = GenParams(temperature=0.0, max_tokens=16)
    assert plain.params(params) is params
    assert warm.params(params) == GenParams(temperature=0.8, seed=3, max_tokens=16)

    async def ask(model: Model) -> Echo:
        result = await model.structured(
            ChatRequest(messages=[Message(role="user", content="q")], params=params), Echo
        )
        return result.value

    assert asyncio.run(ask(warm)).model_dump() == {"temperature": 0.8, "seed": 3}
    assert asyncio.run(ask(plain)).model_dump() == {"temperature": 0.0, "seed": None}
