import asyncio
import json
from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from gramagents.models import Model, create_backend
from gramagents.models.guided import FieldPlan, GuidedDecoder, plan_schema
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import ChatRequest, Generation, GenParams, Message


class Verdict(BaseModel):
    label: Literal["accept", "reject"]
    score: int
    reason: str

    @field_validator("reason")
    @classmethod
    def not_the_label(cls, value: str, info: ValidationInfo) -> str:
        if value.strip().lower() in ("accept", "reject"):
            raise ValueError("the reason must say why, not repeat the label")
        return value


def ask(spec: str, max_reasks: int = 2):
    model = Model(create_backend(spec))
    result = asyncio.run(
        model.structured(
            [Message(role="user", content="Judge this.")], Verdict, max_reasks=max_reasks
        )
    )
    return model, result


def test_validation_errors_are_sent_back_and_reasked():
    answers = iter(
        [
            '{"label": "accept", "score": 3, "reason": "accept"}',
            '{"label": "accept", "score": 3, "reason": "it uses the point"}',
        ]
    )
    ScriptedBackend.register("reask", lambda r: next(answers))
    model, result = ask("scripted:reask")
    assert result.ok and result.value.reason == "it uses the point" and result.attempts == 2
    second = model.backend.calls[1].messages
    assert second[-1].role == "user" and "the reason must say why" in second[-1].content
    assert second[-2].role == "assistant"


def test_what_still_fails_is_a_failure_with_its_reason():
    ScriptedBackend.register("never", lambda r: '{"label": "maybe", "score": 1, "reason": "x"}')
    model, result = ask("scripted:never", max_reasks=1)
    assert not result.ok and result.value is None
    assert result.error.startswith("invalid output after 2 attempts")
    assert "label" in result.error
    assert len(model.backend.calls) == 2


def test_transport_errors_are_not_pasted_into_the_prompt():
    def down(request: ChatRequest) -> str:
        raise ConnectionError("socket closed by peer")

    ScriptedBackend.register("down", down)
    model, result = ask("scripted:down")
    assert not result.ok and result.error.startswith("transport: ")
    assert len(model.backend.calls) == 1  # not re-asked with the error in the prompt


VERDICT_PLAN = (
    FieldPlan("label", "choice", ('"accept"', '"reject"')),
    FieldPlan("score", "integer"),
    FieldPlan("reason", "string"),
)


def test_plan_schema_covers_objects_lists_and_their_nesting():
    assert plan_schema(Verdict.model_json_schema()) == list(VERDICT_PLAN)

    class Nested(BaseModel):
        inner: Verdict
        verdicts: list[Verdict] = Field(max_length=3)
        pages: list[int]
        tags: list[Literal["x", "y"]]

    assert plan_schema(Nested.model_json_schema()) == [
        FieldPlan("inner", "object", fields=VERDICT_PLAN),
        FieldPlan("verdicts", "object_list", fields=VERDICT_PLAN, max_items=3),
        FieldPlan("pages", "integer_list"),
        FieldPlan("tags", "choice_list", ('"x"', '"y"')),
    ]

    class Mapping(BaseModel):
        counts: dict[str, int]

    class Union(BaseModel):
        value: int | str

    assert plan_schema(Mapping.model_json_schema()) is None
    assert plan_schema(Union.model_json_schema()) is None

    class Listy(BaseModel):
        items: list[str]
        flag: bool | None = None

    assert plan_schema(Listy.model_json_schema()) == [
        FieldPlan("items", "string_list"),
        FieldPlan("flag", "choice", ("true", "false")),
    ]


def test_guided_decoder_writes_valid_json_around_the_models_values():
    encode = lambda text: [ord(c) for c in text]  # noqa: E731 - a character "tokenizer"

    def generate(batch, params: GenParams):
        outputs = {"integer": "7 points", "string": 'because "it" fits" trailing'}
        kind = "integer" if params.max_tokens == 8 else "string"
        return [
            Generation(
                text=outputs[kind].split('"')[0] if kind == "string" else outputs[kind],
                completion_tokens=3,
            )
            for _ in batch
        ]

    def score(prefixes, choices):
        # prefer the second choice ("reject") for every prefix
        return [[0.0 if i else -1.0 for i in range(len(choices))] for _ in prefixes]

    decoder = GuidedDecoder(encode, generate, score)
    requests = [
        ChatRequest(messages=[Message(role="user", content="q")], params=GenParams(max_tokens=32))
    ] * 2
    out = decoder.run([[1, 2], [3]], requests, plan_schema(Verdict.model_json_schema()))
    for generation in out:
        value = Verdict.model_validate(json.loads(generation.text))
        assert (value.label, value.score, value.reason) == ("reject", 7, "because")


class Point(BaseModel):
    name: str
    kind: Literal["syntax", "morphology"]


class Found(BaseModel):
    points: list[Point]
    pages: list[int]
    tags: list[Literal["a", "b", "c"]] = Field(min_length=1)


def test_guided_lists_of_objects_and_enums_end_where_the_model_closes_them():
    encode = lambda text: [ord(c) for c in text]  # noqa: E731 - a character "tokenizer"
    decoded = lambda ids: "".join(map(chr, ids))  # noqa: E731

    def generate(batch, params: GenParams):
        return [
            Generation(
                text="3, 5] and more"
                if "[" in params.stop or "]" in params.stop
                else "verb second",
                completion_tokens=2,
            )
            for _ in batch
        ]

    def score(prefixes, choices):
        # Two points, then close; the tag list: "b" first, then close as soon as allowed.
        out = []
        for prefix in prefixes:
            text = decoded(prefix)
            row = []
            for choice in map(decoded, choices):
                if text.endswith('"points": ['):
                    row.append(0.0 if choice == "{" else -5.0)
                elif text.endswith("}") and '"pages"' not in text:
                    wanted = (
                        ", {" if text.count('{"name') < (2 if text[0] == "\x01" else 1) else "]"
                    )
                    row.append(0.0 if choice == wanted else -5.0)
                elif '"tags": [' in text:
                    row.append(0.0 if choice in ('"b"', "]") else -5.0)
                else:  # the enum field of a point
                    row.append(0.0 if choice == '"morphology"' else -5.0)
            out.append(row)
        return out

    requests = [
        ChatRequest(messages=[Message(role="user", content="q")], params=GenParams(max_tokens=8))
    ] * 2
    # two rows decoded together: the first closes its list after two points, the second after one
    first, second = GuidedDecoder(encode, generate, score).run(
        [[1], [2]], requests, plan_schema(Found.model_json_schema())
    )
    for out, points in ((first, 2), (second, 1)):
        value = Found.model_validate(json.loads(out.text))
        assert [(p.name, p.kind) for p in value.points] == [("verb second", "morphology")] * points
        assert value.pages == [3, 5] and value.tags == ["b"]
