"""What the item browser shows of each item: its list row, its full record and its filters.

For an eval, every model's answer: the raw output (of a minimal pair asked as a forced choice,
the reply in each order and the sentence it chose), the extraction rule and value, the score,
latency, whether it came from the cache, and the rubric judge's verdict per dimension. The
prompt is rendered again from the item with the run's template (the same rendering the eval
did); when the template file changed since the run, its hash differs from the one each
response recorded and the page says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic_core import to_json

from ...errors import GramagentsError
from ...records import Item
from ...report.summary import DEFAULT_BREAKDOWNS, SummaryBuilder
from ...scoring.pair_choice import ORDERS, order_vars
from ...tasks import TaskSpec, get_task
from ...templates import PromptTemplate, load_prompt
from .join import FAILURE, RESPONSE, SCORE, JoinedItem, stream_items
from .shards import ShardWriter

OUTCOMES = {
    "c": "correct",
    "p": "partly right",
    "w": "wrong",
    "i": "invalid",
    "s": "scored",
    "u": "no gold",
    "f": "failed or not scored",
    "-": "not answered",
}
"""Outcome codes of a model's answer to an item, as the page filters them."""

SNIPPET_VARS = ("sentence", "question", "text", "stem", "task_input", "good", "source")
SNIPPET_CHARS = 160
SHORT_CHARS = 60
MAX_TEXT = 8000
MAX_LIST = 60
_SPACE = re.compile(r"\s+")


def trim(value: Any) -> Any:
    """`value` cut to what a page can show: long strings and lists shortened, deep nests cut.

    Most values are small: those are measured in one C call and returned as they are.
    """
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + " …"
    if len(to_json(value, fallback=str)) <= MAX_TEXT:
        return value
    return _cut(value, 0)


def _cut(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + " …"
    if isinstance(value, dict):
        if depth > 5:
            return "…"
        return {str(k): _cut(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if depth > 5:
            return "…"
        cut = [_cut(v, depth + 1) for v in value[:MAX_LIST]]
        return cut + [f"… {len(value) - MAX_LIST} more"] if len(value) > MAX_LIST else cut
    return value


def short(value: Any) -> str:
    """A value as one short line (a list of letters reads as `TFFT`)."""
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(v, str) and len(v) == 1 for v in value):
        text = "".join(value)
    elif isinstance(value, str):
        text = value
    elif isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = str(value)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 1] + "…"


def snippet(item: Item) -> str:
    """One line that tells items apart: the sentence or question, else the longest variable."""
    variables = item.prompt.vars
    text = next((variables[k] for k in SNIPPET_VARS if isinstance(variables.get(k), str)), None)
    if text is None:
        strings = [v for v in variables.values() if isinstance(v, str)]
        lists = [" / ".join(map(str, v)) for v in variables.values() if isinstance(v, list)]
        text = max(strings or lists or [""], key=len)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def outcome(records: dict[int, dict[str, Any]], headline: str | None) -> str:
    """The outcome code (see `OUTCOMES`) of one model's records of one item."""
    score = records.get(SCORE)
    if score is None:  # failed, or answered but not scored yet: asked again on resume
        return "f" if FAILURE in records or RESPONSE in records else "-"
    scores = score.get("scores") or {}
    if score.get("invalid"):
        return "i"
    if not scores:
        return "u"
    if headline not in scores:
        return "s"
    value = float(scores[headline])
    top = 100.0 if headline.endswith("pct") else 1.0
    return "c" if value >= top else "w" if value <= 0 else "p"


def _shown(answer: dict[str, Any] | None) -> str:
    """An answer in the item list: its value, or why it is invalid (`invalid: echo`)."""
    if not answer:
        return ""
    if answer["invalid"] and answer.get("invalid_reason"):
        return f"invalid: {answer['invalid_reason']}"
    return short(answer["extracted"])


class Presenter:
    """Turns items (and, for an eval, their records) into the browser's rows."""

    def __init__(self, models: list[str]) -> None:
        self.models = models
        self._templates: dict[str, PromptTemplate | str] = {}
        self._specs: dict[str, TaskSpec | None] = {}
        self._rubrics: dict[str, dict[str, float]] = {}

    def spec(self, task: str) -> TaskSpec | None:
        """The task's spec (None for a task no recipe registers)."""
        if task not in self._specs:
            self._specs[task] = get_task(task)
        return self._specs[task]

    def facet_names(self, tasks: Iterable[str]) -> list[str]:
        """The metadata the browser filters by: category, level, language, the tasks' own."""
        names = ["task", *DEFAULT_BREAKDOWNS]
        for task in tasks:
            spec = self.spec(task)
            names += [k for k in (spec.breakdowns if spec else ()) if k not in names]
        return names

    def prompt(self, item: Item) -> dict[str, Any]:
        """The prompt as the model got it: chat messages, or a minimal pair's sentences."""
        spec = self.spec(item.task)
        variables = item.prompt.vars
        if spec is not None and spec.mode == "loglikelihood":
            return {
                "pair": {
                    "context": str(variables.get("context", "")),
                    "good": str(variables.get("good", "")),
                    "bad": str(variables.get("bad", "")),
                }
            }
        name = item.prompt.template
        template = self._templates.get(name)
        if template is None:
            try:
                template = load_prompt(name)
            except GramagentsError as exc:
                template = str(exc)
            self._templates[name] = template
        if isinstance(template, str):
            return {"template": name, "error": template, "vars": trim(variables)}
        orders = ORDERS if spec is not None and spec.mode == "choice" else ("",)
        try:
            shown = [
                {
                    "order": order,
                    "messages": [
                        {"role": m.role, "content": trim(m.content)}
                        for m in template.render(
                            order_vars(variables, order) if order else variables
                        )
                    ],
                }
                for order in orders
            ]
        except GramagentsError as exc:
            return {"template": name, "error": str(exc), "vars": trim(variables)}
        if len(shown) > 1:  # a minimal pair asked as a forced choice: both orders
            return {"template": name, "hash": template.hash, "orders": shown}
        return {"template": name, "hash": template.hash, "messages": shown[0]["messages"]}

    def rubric_points(self, rubric: str) -> dict[str, float]:
        """Points of each dimension of a rubric (empty when it cannot be found now)."""
        if rubric not in self._rubrics:
            try:
                from ...judging.rubric import find_rubric

                loaded = find_rubric(rubric)
                self._rubrics[rubric] = {d.name: d.points for d in loaded.dimensions}
            except GramagentsError:
                self._rubrics[rubric] = {}
        return self._rubrics[rubric]

    def answer(self, records: dict[int, dict[str, Any]], task: str) -> dict[str, Any]:
        """One model's answer to an item, as the detail view shows it."""
        response = records.get(RESPONSE) or records.get(FAILURE) or {}
        score = records.get(SCORE) or {}
        spec = self.spec(task)
        code = outcome(records, spec.headline if spec else None)
        details = dict(score.get("details") or {})
        judge = details.pop("judge", None)
        shown: dict[str, Any] = {
            "outcome": code,
            "raw": trim(response.get("raw")),
            "extracted": trim(score.get("extracted", response.get("extracted"))),
            "rule": response.get("rule"),
            "scores": score.get("scores") or {},
            "invalid": bool(score.get("invalid")),
            "invalid_reason": score.get("invalid_reason") or response.get("invalid_reason"),
            "latency": response.get("latency_s"),
            "cached": response.get("cached"),
            "error": response.get("error"),
            "prompt_hash": response.get("prompt_hash"),
        }
        if response.get("logprobs"):
            shown["logprobs"] = response["logprobs"]
        if response.get("choices"):
            shown["choices"] = trim(response["choices"])
        if details:
            shown["details"] = trim(details)
        if judge:
            shown["judge"] = {**judge, "points": self.rubric_points(str(judge.get("rubric")))}
        return shown

    def eval_row(self, joined: JoinedItem) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """An eval item's list row, full record and facet values."""
        item = joined.item
        meta = item.meta if item else _meta_of(joined)
        answers = [
            self.answer(joined.records[m], joined.task) if m in joined.records else None
            for m in range(len(self.models))
        ]
        gold = item.answer if item else None
        for records in joined.records.values():
            if SCORE in records and records[SCORE].get("gold") is not None:
                gold = records[SCORE]["gold"]  # a gold given with --answers is the score's
                break
        extracted = [_shown(a) for a in answers]
        row = [joined.id, snippet(item) if item else "", short(gold), extracted]
        detail = {
            "id": joined.id,
            "task": joined.task,
            "gold": trim(gold),
            "meta": trim(meta),
            "prompt": self.prompt(item) if item else {"error": "the item is not in the dataset"},
            "answers": answers,
        }
        return row, detail, {"task": joined.task, **meta}

    def build_row(self, item: Item) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """A built item's list row, full record and facet values."""
        row = [item.id, snippet(item), short(item.answer), []]
        detail = {
            "id": item.id,
            "task": item.task,
            "gold": trim(item.answer),
            "meta": trim(item.meta),
            "prompt": self.prompt(item),
            "answers": [],
        }
        return row, detail, {"task": item.task, **item.meta}


def _meta_of(joined: JoinedItem) -> dict[str, Any]:
    for records in joined.records.values():
        if SCORE in records:
            return dict(records[SCORE].get("meta") or {})
    return {}


def disagree(answers: list[dict[str, Any] | None]) -> str:
    """`d` when models that answered read different answers, else `-`."""
    values = {repr(a["extracted"]) for a in answers if a and a["outcome"] not in "f-"}
    return "d" if len(values) > 1 else "-"


def write_eval_items(
    writer: ShardWriter,
    presenter: Presenter,
    items: Iterator[JoinedItem],
    summary: SummaryBuilder | None = None,
) -> None:
    """Add every joined item of an eval to `writer` (and its scores to `summary`, if given)."""
    models = presenter.models
    for joined in items:
        if summary is not None:
            for records in joined.records.values():
                if SCORE in records:
                    summary.add(records[SCORE])
        row, detail, facets = presenter.eval_row(joined)
        answers = detail["answers"]
        flags = {f"m{m}": (a["outcome"] if a else "-") for m, a in enumerate(answers)}
        flags["disagree"] = disagree(answers) if len(models) > 1 else "-"
        writer.add(row, detail, facets, flags)


def write_build_items(writer: ShardWriter, presenter: Presenter, dataset: Path) -> None:
    """Add every item of a build's `dataset.jsonl` to `writer`, read line by line."""
    if not dataset.is_file():
        return
    for item in stream_items(dataset):
        row, detail, facets = presenter.build_row(item)
        writer.add(row, detail, facets)
