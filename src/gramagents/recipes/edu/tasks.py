"""EduEval (`../shared/seeds/003_*`): standardized exam items evaluated per cognitive level.

Tasks, one per item shape, each zero-shot and with three worked examples (`-3SHOT`):

- `EDU-MC`: multiple choice (4 options after the task-format optimizer); accuracy through an
  extraction chain with fallbacks (`答案是B`, `选择B`, "the answer is B", ...);
- `EDU-MC-MULTI`: multiple choice with several right options (`"BD"`); right only when the
  letters read from the reply are exactly the gold set (`答案是BD`, `B、D`, "A and C");
- `EDU-DIALOGUE`: classroom-dialogue classification (label 1-9); accuracy;
- `EDU-ESSAY`: essay scoring (0-100); RMSE (the paper's headline, lower is better), QWK and
  Pearson over a model's items;
- `EDU-TEXT`: poetry appreciation and reading comprehension; ROUGE-L against the reference
  answer (characters for Chinese);
- `EDU-QG`, `EDU-TD`, `EDU-TW`: question generation, teaching design and text writing, judged
  with the rubrics `question-generation`, `teaching-design` and `text-writing`.

The report lays the scores out as the paper's Tables 2-5 (`report.py`: one column per source
task, 1-1 … 6-4) and breaks every task down by paper task, cognitive level and subject.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ...api import (
    CONFLICT,
    HEDGE,
    Aggregate,
    Extraction,
    GenParams,
    Invalid,
    ItemScore,
    TaskSpec,
    chain,
    constant,
    disagrees,
    metric,
    nfkc,
    offers_alternatives,
    quoted_options,
    task,
)

FAMILY = "edu"
SHOTS = (0, 3)
BREAKDOWNS = ("task_id", "level", "subject")
"""`task_id`: the paper's task (1-1 … 6-4) an item's source file is, for its Tables 2-5."""


def _letters(meta: Mapping[str, Any]) -> str:
    return "".join(sorted((meta.get("options") or {}).keys())) or "ABCD"


def _choice(text: str, meta: Mapping[str, Any]) -> Any:
    """The option letter, or the option whose text alone the reply repeats.

    Letters that name two options, or a letter and another option's text, are a conflict.
    """
    from .metrics import extract_choice, labelled_letters

    letters = _letters(meta)
    if offers_alternatives(list(letters), text):
        return Invalid(HEDGE)
    if len(labelled_letters(text, letters)) > 1:
        return Invalid(CONFLICT)
    value, _rule = extract_choice(text, letters)
    if value is None:
        quoted = quoted_options(text, meta)
        return quoted[0] if len(quoted) == 1 else None
    return Invalid(CONFLICT) if disagrees(value, text, meta) else value


def _choices(text: str, meta: Mapping[str, Any]) -> Any:
    from .metrics import extract_choices

    value, _rule = extract_choices(text, _letters(meta))
    return value


def _label(text: str, meta: Mapping[str, Any]) -> Any:
    from .metrics import extract_label

    return extract_label(text, 1, 9)


def _score(text: str, meta: Mapping[str, Any]) -> Any:
    from .metrics import extract_score

    return extract_score(text, 0, 100)


def _text(text: str, meta: Mapping[str, Any]) -> Any:
    return text.strip() or None


chain("edu-choice", [("choice", _choice)])
chain("edu-choices", [("choices", _choices)])
chain("edu-label", [("label", _label)])
chain("edu-score", [("score", _score)])
chain("edu-text", [("text", _text)], answer="text")


@metric("edu-acc")
def edu_accuracy(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """1 when the extracted answer equals the gold (letters, labels); invalid scores 0."""
    right = not extraction.invalid and str(extraction.value) == str(gold)
    return ItemScore({"acc": 1.0 if right else 0.0})


@metric("edu-set")
def edu_exact_set(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """1 when the letters read are exactly the gold letters (no more, no fewer)."""
    right = not extraction.invalid and set(str(extraction.value)) == set(str(gold))
    return ItemScore({"acc": 1.0 if right else 0.0})


@metric("edu-essay")
def essay_error(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """The absolute error of a predicted essay score (the task's figures are aggregates)."""
    if extraction.invalid:
        return ItemScore({"abs_error": 100.0})
    return ItemScore({"abs_error": abs(float(extraction.value) - float(gold))})


@metric("edu-rouge")
def rouge(extraction: Extraction, gold: Any, meta: Mapping[str, Any]) -> ItemScore:
    """ROUGE-L F between the answer and the reference (characters for Chinese)."""
    from .metrics import rouge_l

    if extraction.invalid:
        return ItemScore({"rouge_l": 0.0})
    # the answer was read NFKC-normalised: the reference is compared in the same form
    return ItemScore({"rouge_l": float(rouge_l(str(extraction.value), nfkc(str(gold))).f)})


def aggregate_essay(records: list[dict[str, Any]]) -> Aggregate:
    """RMSE (the paper's metric for 3-5), QWK and Pearson between predicted and gold scores.

    An answer without a score in range counts as 0.
    """
    from ...api import pearson, quadratic_kappa
    from .metrics import rmse

    gold = [float(r["gold"]) for r in records]
    predicted = [0.0 if r.get("invalid") else float(r["extracted"]) for r in records]
    r = pearson(predicted, gold)
    scores = {
        "rmse": rmse(predicted, gold),
        "qwk": quadratic_kappa(predicted, gold),
        "pearson": 0.0 if math.isnan(r) else r,  # constant predictions: no correlation
    }
    return Aggregate(scores=scores, tables={})


def _register(name: str, description: str, **spec: Any) -> None:
    for shots in SHOTS:
        suffix = "" if shots == 0 else f"-{shots}SHOT"
        task(
            TaskSpec(
                name=f"{name}{suffix}",
                family=FAMILY,
                breakdowns=BREAKDOWNS,
                description=f"{description} ({'zero-shot' if shots == 0 else f'{shots}-shot'})",
                **spec,
            )
        )


def _options_baseline(item: Any) -> float:
    options = item.meta.get("options") or {}
    return 1.0 / len(options) if options else 0.25


_register(
    "EDU-MC",
    "Multiple choice, answered with a letter",
    extractor="edu-choice",
    metric="edu-acc",
    params=GenParams(max_tokens=32),
    random_baseline=_options_baseline,
)


def _subsets_baseline(item: Any) -> float:
    options = item.meta.get("options") or {}
    return 1.0 / (2 ** len(options) - 1) if options else 1 / 15


_register(
    "EDU-MC-MULTI",
    "Multiple choice with several right options, answered with their letters (exact set)",
    extractor="edu-choices",
    metric="edu-set",
    params=GenParams(max_tokens=32),
    random_baseline=_subsets_baseline,
)
_register(
    "EDU-DIALOGUE",
    "Classroom-dialogue classification, a label 1-9",
    extractor="edu-label",
    metric="edu-acc",
    params=GenParams(max_tokens=16),
    random_baseline=constant(1 / 9),
)
_register(
    "EDU-ESSAY",
    "Essay scoring, a score 0-100",
    extractor="edu-score",
    metric="edu-essay",
    headline="rmse",
    params=GenParams(max_tokens=16),
    aggregate=aggregate_essay,
)
_register(
    "EDU-TEXT",
    "Poetry appreciation and reading comprehension, scored by ROUGE-L",
    extractor="edu-text",
    metric="edu-rouge",
    headline="rouge_l",
    params=GenParams(max_tokens=256),
)
for _name, _rubric, _what in (
    ("EDU-QG", "question-generation", "Question generation"),
    ("EDU-TD", "teaching-design", "Teaching design"),
    ("EDU-TW", "text-writing", "Text writing"),
):
    _register(
        _name,
        f"{_what}, judged with the rubric '{_rubric}'",
        extractor="edu-text",
        metric="edu-rouge",  # unused: judged answers are scored by the judge
        headline="judge_pct",
        params=GenParams(max_tokens=384),
        rubric=_rubric,
    )
