"""Schema-guided JSON decoding for local models.

Small local models rarely write valid JSON when asked to. For an object schema whose fields
are strings, booleans, numbers, enums, objects of such fields, or lists of any of these, a
local backend can instead write the JSON itself and let the model fill in only the values:

- booleans and enums: every allowed value is scored by log-likelihood after the prompt and the
  JSON written so far, and the likeliest is taken;
- strings: the model generates after an opening quote until it closes the quote, for at
  most the request's `max_tokens`, and for a schema `maxLength` of N characters at most
  N // 3 + 1 tokens (a sentence needs tens of tokens, not hundreds), the text cut to N;
- numbers: the model generates at most `NUMBER_TOKENS` tokens and the first number in them
  is taken, held inside the schema's `minimum`/`maximum`;
- lists of strings or numbers: the model generates after `[` until it closes the list;
- lists of enums or of objects: before each element, closing the list (once `minItems` are
  there) and going on are scored by log-likelihood, so the model decides how many elements
  there are (at most `maxItems`, or `MAX_ITEMS`); each object is filled field by field.

The result is always well-formed JSON in the schema's field order; pydantic still validates
it, and a validation error is re-asked as with any other backend. Schemas outside this subset
(free-form mappings, unions of several types) fall back to free generation.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..records import ChatRequest, Generation, GenParams

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
MAX_ITEMS = 6
"""Elements of a list of enums or objects when its schema sets no `maxItems`."""
NUMBER_TOKENS = 8
"""Tokens a number's value may take."""
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass(frozen=True)
class FieldPlan:
    """How one field's value is produced."""

    name: str
    kind: str
    """`choice`, `string`, `number`, `integer`, `string_list`, `number_list`, `integer_list`,
    `choice_list`, `object` or `object_list`."""
    choices: tuple[str, ...] = ()
    """JSON texts of the allowed values, for `choice` and `choice_list`."""
    fields: tuple[FieldPlan, ...] = ()
    """The fields of an `object`, or of each element of an `object_list`."""
    min_items: int = 0
    max_items: int | None = None
    max_length: int | None = None
    """A string's `maxLength` (characters)."""
    bounds: tuple[float | None, float | None] = (None, None)
    """A number's `minimum` and `maximum`."""

    def token_limit(self, requested: int) -> int:
        """Tokens this field's value may take, given the request's `max_tokens`."""
        if self.kind in ("number", "integer"):
            return min(requested, NUMBER_TOKENS)
        if self.max_length is not None:
            return max(1, min(requested, self.max_length // 3 + 1))
        return requested


def _resolve(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in prop:
        return _resolve(defs.get(prop["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "anyOf" in prop:
        options = [p for p in prop["anyOf"] if p.get("type") != "null"]
        if len(options) == 1:
            return _resolve(options[0], defs)
    if "allOf" in prop and len(prop["allOf"]) == 1:
        return _resolve(prop["allOf"][0], defs)
    return prop


def plan_schema(schema: dict[str, Any] | None) -> list[FieldPlan] | None:
    """Field plans for an object schema, or None when guided decoding cannot cover it."""
    if not schema:
        return None
    return _plan_object(schema, schema.get("$defs", {}))


def _plan_object(schema: dict[str, Any], defs: dict[str, Any]) -> list[FieldPlan] | None:
    if schema.get("type") != "object" or not schema.get("properties"):
        return None
    plans = []
    for name, raw in schema["properties"].items():
        plan = _plan_field(name, _resolve(raw, defs), defs)
        if plan is None:
            return None
        plans.append(plan)
    return plans


def _choices(prop: dict[str, Any]) -> tuple[str, ...] | None:
    if "enum" in prop:
        return tuple(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "const" in prop:
        return (json.dumps(prop["const"], ensure_ascii=False),)
    if prop.get("type") == "boolean":
        return ("true", "false")
    return None


def _plan_field(name: str, prop: dict[str, Any], defs: dict[str, Any]) -> FieldPlan | None:
    choices = _choices(prop)
    kind = prop.get("type")
    if choices is not None:
        return FieldPlan(name, "choice", choices)
    if kind == "string":
        return FieldPlan(name, kind, max_length=prop.get("maxLength"))
    if kind in ("integer", "number"):
        low = prop.get("minimum", prop.get("exclusiveMinimum"))
        return FieldPlan(name, kind, bounds=(low, prop.get("maximum")))
    if kind == "object":
        fields = _plan_object(prop, defs)
        return None if fields is None else FieldPlan(name, "object", fields=tuple(fields))
    if kind != "array":
        return None
    items = _resolve(prop.get("items", {}), defs)
    bounds = {"min_items": int(prop.get("minItems", 0)), "max_items": prop.get("maxItems")}
    item_choices = _choices(items)
    if item_choices is not None:
        return FieldPlan(name, "choice_list", item_choices, **bounds)
    if items.get("type") in ("string", "integer", "number"):
        return FieldPlan(name, f"{items['type']}_list")
    if items.get("type") == "object":
        fields = _plan_object(items, defs)
        if fields is not None:
            return FieldPlan(name, "object_list", fields=tuple(fields), **bounds)
    return None


Encode = Callable[[str], list[int]]
GenerateFn = Callable[[list[list[int]], GenParams], list[Generation]]
ScoreFn = Callable[[list[list[int]], list[list[int]]], list[list[float]]]


class GuidedDecoder:
    """Fill a schema's fields for a batch of requests with one model."""

    def __init__(self, encode: Encode, generate: GenerateFn, score: ScoreFn) -> None:
        """`score(prefixes, choices)` gives each choice's log-likelihood after each prefix."""
        self.encode = encode
        self.generate = generate
        self.score = score

    def run(
        self, prompts: list[list[int]], requests: list[ChatRequest], plans: list[FieldPlan]
    ) -> list[Generation]:
        """JSON objects for requests that share one schema (`plans`)."""
        values = self._objects(plans, [list(p) for p in prompts], requests)
        return [
            Generation(
                text=text,
                finish_reason="stop",
                prompt_tokens=len(prompt),
                completion_tokens=used,
            )
            for (text, used), prompt in zip(values, prompts, strict=True)
        ]

    def _objects(
        self,
        plans: list[FieldPlan] | tuple[FieldPlan, ...],
        ids: list[list[int]],
        requests: list[ChatRequest],
    ) -> list[tuple[str, int]]:
        """One object per row, its fields filled in order (every row in step)."""
        ids = [list(row) for row in ids]
        texts = [""] * len(requests)
        tokens = [0] * len(requests)
        for position, plan in enumerate(plans):
            key = ("{" if position == 0 else ", ") + json.dumps(plan.name) + ": "
            for row in range(len(ids)):
                ids[row] += self.encode(key)
                texts[row] += key
            values = self._fill(plan, ids, requests)
            for row, (value, used) in enumerate(values):
                ids[row] += self.encode(value)
                texts[row] += value
                tokens[row] += used
        closing = "}" if plans else "{}"
        return [(text + closing, used) for text, used in zip(texts, tokens, strict=True)]

    def _fill(
        self, plan: FieldPlan, ids: list[list[int]], requests: list[ChatRequest]
    ) -> list[tuple[str, int]]:
        if plan.kind == "choice":
            return self._choose(plan.choices, ids)
        if plan.kind == "object":
            return self._objects(plan.fields, ids, requests)
        if plan.kind in ("choice_list", "object_list"):  # as long as each row's model decides
            return self._lists(plan, ids, requests)
        opener = '"' if plan.kind in ("string", "string_list") else ""
        if plan.kind.endswith("_list"):
            opener = "[" + opener
        stop = {"string": ('"',)}.get(
            plan.kind, ("]",) if plan.kind.endswith("_list") else (",", "}", "\n")
        )
        by_params: dict[GenParams, list[int]] = defaultdict(list)
        for row, request in enumerate(requests):
            limit = plan.token_limit(request.params.max_tokens)
            params = request.params.model_copy(update={"stop": stop, "max_tokens": limit})
            by_params[params].append(row)
        results: list[tuple[str, int]] = [("null", 0)] * len(ids)
        for params, rows in by_params.items():
            outputs = self.generate([ids[r] + self.encode(opener) for r in rows], params)
            for row, output in zip(rows, outputs, strict=True):
                used = output.completion_tokens or 0
                results[row] = (_value_text(plan, output.text), used)
        return results

    def _lists(
        self, plan: FieldPlan, ids: list[list[int]], requests: list[ChatRequest]
    ) -> list[tuple[str, int]]:
        """Lists of enums or objects, each closed where its model's likeliest step is to close it.

        The rows still open take their next element together (one batch per step).
        """
        limit = plan.max_items if plan.max_items is not None else MAX_ITEMS
        if plan.kind == "choice_list":
            limit = min(limit, len(plan.choices))
        rows = [list(r) + self.encode("[") for r in ids]
        texts, used = ["["] * len(ids), [0] * len(ids)
        chosen: list[list[str]] = [[] for _ in ids]
        open_rows = [r for r in range(len(ids)) if limit > 0]
        while open_rows:
            steps: dict[tuple[str, ...], list[int]] = defaultdict(list)
            for r in open_rows:  # rows offered the same next steps decide together
                separator = ", " if chosen[r] else ""
                if plan.kind == "choice_list":
                    options = [separator + c for c in plan.choices if c not in chosen[r]]
                else:
                    options = [separator + "{"]
                if len(chosen[r]) >= plan.min_items:
                    options.append("]")
                steps[tuple(options)].append(r)
            going: list[int] = []
            for options, members in steps.items():
                picks = self._choose(options, [rows[r] for r in members])
                for r, (picked, _) in zip(members, picks, strict=True):
                    if picked == "]":
                        continue
                    going.append(r)
                    if plan.kind == "choice_list":
                        self._extend(r, picked, rows, texts)
                        chosen[r].append(picked.removeprefix(", "))
            if plan.kind == "object_list" and going:
                separators = [", " if chosen[r] else "" for r in going]
                elements = self._objects(
                    plan.fields,
                    [rows[r] + self.encode(sep) for r, sep in zip(going, separators, strict=True)],
                    [requests[r] for r in going],
                )
                for r, sep, (element, spent) in zip(going, separators, elements, strict=True):
                    self._extend(r, sep + element, rows, texts)
                    chosen[r].append(element)
                    used[r] += spent
            open_rows = [r for r in sorted(going) if len(chosen[r]) < limit]
        return [(text + "]", spent) for text, spent in zip(texts, used, strict=True)]

    def _extend(self, row: int, value: str, rows: list[list[int]], texts: list[str]) -> None:
        rows[row] += self.encode(value)
        texts[row] += value

    def _choose(self, choices: tuple[str, ...], ids: list[list[int]]) -> list[tuple[str, int]]:
        if len(choices) == 1:
            return [(choices[0], 0)] * len(ids)
        encoded = [self.encode(c) for c in choices]
        picked = []
        for row_scores in self.score(ids, encoded):
            best = max(range(len(choices)), key=row_scores.__getitem__)
            picked.append((choices[best], len(encoded[best])))
        return picked


def _unescape(text: str) -> str:
    try:
        return str(json.loads(f'"{text}"'))
    except json.JSONDecodeError:
        return text.replace('\\"', '"')


def _value_text(plan: FieldPlan, generated: str) -> str:
    kind = plan.kind
    if kind == "string":
        return json.dumps(generated.strip()[: plan.max_length], ensure_ascii=False)
    if kind == "string_list":
        items = [_unescape(m).strip() for m in _QUOTED.findall('"' + generated)]
        return json.dumps([i for i in items if i], ensure_ascii=False)
    if kind in ("number_list", "integer_list"):
        found = _NUMBER.findall(generated)
        values = [str(int(float(n))) if kind == "integer_list" else n for n in found]
        return "[" + ", ".join(values) + "]"
    match = _NUMBER.search(generated)
    if match is None:
        return "null"
    value, (low, high) = float(match.group(0)), plan.bounds
    held = min(max(value, low if low is not None else value), high if high is not None else value)
    if kind == "integer":
        return str(int(held))
    return match.group(0) if held == value else json.dumps(held)
