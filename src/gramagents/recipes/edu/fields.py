"""One EduEval line read by rules: its shape, and its fields in the unified schema.

Field names vary between releases and hand-made files; each field of the schema is looked up
under the names below, first one found wins (`ques_content`, then `question`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .options import (
    OptionError,
    answer_letters,
    number_answers,
    numbered_options,
    options_from_field,
    split_options,
)

CONTENT = ("ques_content", "question", "content", "stem", "题目", "题干")
ANSWER = ("ques_answer", "answer", "答案", "correct_answer")
OPTIONS = ("options", "choices", "选项")
EXPLANATION = ("ques_analyze", "analysis", "explanation", "解析")
DIFFICULTY_FIELDS = ("ques_difficulty", "difficulty", "难度")
SUBJECT = ("subject", "学科")
GRADE = ("grade", "年级")
IDS = ("id", "qid", "ques_id")

DIFFICULTY = {"易": 1, "容易": 1, "较易": 2, "一般": 3, "中档": 3, "较难": 4, "难": 5, "困难": 5}
_LETTER_ANSWER = re.compile(r"[(（]?\s*[A-Ha-h](?:\s*[,，、;；/]?\s*[A-Ha-h])*\s*[)）]?\s*\.?")
_TEXT_TASKS = [
    (re.compile(r"诗|poem|poetry", re.I), "poetry"),
    (re.compile(r"阅读|reading", re.I), "reading"),
    (re.compile(r"写作|作文|writing", re.I), "text_writing"),
]


def pick(record: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any]:
    """The first of `names` the record gives a value (not None, not blank), and the value."""
    for name in names:
        value = record.get(name)
        if value is not None and not (isinstance(value, str) and not value.strip()):
            return name, value
    return names[0], None


def text_of(record: dict[str, Any], names: tuple[str, ...], missing: list[str]) -> str | None:
    """A text field, or None with its (first) name noted as missing.

    A list (the release gives poetry and reading answers as one string per sub-question) is
    its elements' texts in order, one per line: never the list's Python form.
    """
    name, value = pick(record, names)
    if isinstance(value, list):
        parts = [str(v).strip() for v in value if v is not None and str(v).strip()]
        value = "\n".join(parts) or None
    if value is None:
        missing.append(name)
        return None
    return str(value).strip()


def _letters_only(answer: Any) -> bool:
    values = answer if isinstance(answer, list) else [answer]
    return bool(values) and all(
        isinstance(v, str) and _LETTER_ANSWER.fullmatch(v.strip()) is not None for v in values
    )


def shape_of(record: dict[str, Any], file_stem: str) -> str | None:
    """The item shape a line's keys (and, for open questions, its file name) say."""
    keys = set(record)
    if "dialogue" in keys:
        return "dialogue"
    if "score" in keys and "question" in keys:
        return "essay"
    if keys & {"knowledge_point", "task_description"}:
        return "question_generation"
    if keys & {"topic", "teaching_design_requirements"}:
        return "teaching_design"
    _, content = pick(record, CONTENT)
    if content is None:
        return None
    _, answer = pick(record, ANSWER)
    if pick(record, OPTIONS)[1] is not None or _letters_only(answer):
        return "mc"  # one letter or several (a multiple-answer item)
    numbered = numbered_options(str(content))
    if numbered is not None and number_answers(answer, numbered[1]) != answer:
        return "mc"  # `选项: 1. … 2. …` answered by number
    text_shape = next((s for pattern, s in _TEXT_TASKS if pattern.search(file_stem)), None)
    try:
        _, options = split_options(str(content))
    except OptionError:
        return text_shape or "mc"  # options there but unreadable: refused with the reason
    if options and (text_shape is None or _answers_an_option(answer, options)):
        return "mc"  # an option's text given as the answer, or one no rule reads: refused
    return text_shape or "reading"


def _answers_an_option(answer: Any, options: dict[str, str]) -> bool:
    try:
        answer_letters(answer, options)
    except OptionError:
        return False
    return True


def mc_fields(record: dict[str, Any], missing: list[str], warn: Callable[[str], None]) -> Any:
    """Stem, options, answer letters, shape and difficulty of a choice item; or why not."""
    content = text_of(record, CONTENT, missing) or ""
    field, given = pick(record, OPTIONS)
    try:
        prompt, options = split_options(content)
    except OptionError as exc:
        if given is None:
            return f"options: {exc}"
        prompt = content.strip()  # the options field has them: the content is the stem
    if given is not None:
        try:
            options = options_from_field(given)
        except OptionError as exc:
            return f"options: {exc}"
    name, answer = pick(record, ANSWER)
    provenance = []
    numbered = numbered_options(content) if given is None and len(options) < 2 else None
    if numbered is not None:
        prompt, options = numbered
        answer = number_answers(answer, options)
        provenance.append(f"rules: options numbered 1-{len(options)}, lettered in that order")
    if len(options) < 2:
        where = field if given is not None else "ques_content"
        return f"options could not be split out of {where}"
    try:
        letters = answer_letters(answer, options)
    except OptionError as exc:
        return f"{name}: {exc}"
    label_field, label = pick(record, DIFFICULTY_FIELDS)
    if label is None:
        missing.append(label_field)
    return {
        "prompt": prompt,
        "options": options,
        "answer": "".join(letters),
        "shape": "mc" if len(letters) == 1 else "mc_multi",
        "explanation": text_of(record, EXPLANATION, missing),
        "difficulty": None if label is None else difficulty(label, label_field, warn),
        "difficulty_label": None if label is None else str(label),
        "provenance": provenance,
    }


def difficulty(label: Any, field: str, warn: Callable[[str], None]) -> int | None:
    """A difficulty label (`易` … `难`) or level 1-5 as 1-5; an unknown label is a warning."""
    if isinstance(label, int) and not isinstance(label, bool) and 1 <= label <= 5:
        return label
    found = DIFFICULTY.get(str(label).strip())
    if found is None:
        warn(f"field '{field}': unknown label {label!r}")
    return found


def other_fields(
    record: dict[str, Any], shape: str, missing: list[str], grade: str | None, subject: str | None
) -> dict[str, Any] | str:
    """Prompt and answer of the items that are not multiple choice (or why not)."""
    if shape == "dialogue":
        answer = record.get("label")
        if not isinstance(answer, int) or not 1 <= answer <= 9:
            return f"label {answer!r}: an integer 1-9 expected"
        return {"prompt": text_of(record, ("dialogue",), missing) or "", "answer": answer}
    if shape == "essay":
        prompt = text_of(record, ANSWER, missing) or ""
        answer = record.get("score")
        if not isinstance(answer, int | float) or not 0 <= answer <= 100:
            return f"score {answer!r}: a number 0-100 expected"
        if not prompt:
            return "ques_answer (the essay) is empty"
        return {"prompt": prompt, "answer": answer}
    if shape in ("question_generation", "teaching_design"):
        topic, label = (
            ("knowledge_point", "知识点") if shape == "question_generation" else ("topic", "课题")
        )
        ask_field = (
            "task_description" if shape == "question_generation" else "teaching_design_requirements"
        )
        what = text_of(record, (topic,), missing) or ""
        ask = text_of(record, (ask_field,), missing) or ""
        prompt = f"年级：{grade or ''}；学科：{subject or ''}；{label}：{what}\n{ask}".strip()
        return {"prompt": prompt, "answer": None}
    prompt = text_of(record, CONTENT, missing) or ""  # poetry, reading, text writing
    answer = text_of(record, ANSWER, missing)
    if shape != "text_writing" and answer is None:
        return "ques_answer (the reference answer) is empty"
    return {"prompt": prompt, "answer": answer}
