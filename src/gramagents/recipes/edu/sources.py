"""Readers for the public EduEval layout, standardized by rules to one schema.

The layout: a root folder with one folder per cognitive level (`1_memory`, `2.理解`, ...), one
JSONL per task inside. Each line's shape is told by its keys:

- `mc` (multiple choice): `subject`, `ques_content` (options inside), `ques_answer` (`"B"` or
  `["B"]`), `ques_analyze`, `ques_difficulty`, sometimes `category_cn`, `ques_type`,
  `ques_knowledges`;
- `dialogue`: `dialogue`, `subject` (int), `label` (int 1-9);
- `essay`: `question`, `score` (0-100), `ques_answer` (the essay);
- `question_generation`: `id`, `grade`, `subject`, `knowledge_point`, `task_description`;
- `teaching_design`: `id`, `grade`, `subject`, `topic`, `teaching_design_requirements`;
- `poetry`, `reading`, `text_writing`: `ques_content`, `ques_answer` (text), told apart by the
  file name.

The level comes from the folder, the grade from the file name (`小学`/`primary`,
`初中`/`junior`/`middle`, `高中`/`senior`/`high`, `grade7`, `七年级`) unless the line has one.
A missing field is reported as a warning naming file, line and field, never filled in by a
guess; a line the rules cannot parse comes back as `Unparsed` with the reason, for the
standardization agent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...errors import InputError
from ...sources._text import parse_json_line, read_utf8
from .taxonomy import level as find_level

DIFFICULTY = {"易": 1, "容易": 1, "较易": 2, "一般": 3, "中档": 3, "较难": 4, "难": 5, "困难": 5}
_OPTION = re.compile(r"(?:^|(?<=\s)|(?<=[。；;，,]))[(（]?([A-H])[)）]?\s*[.．、:：)]\s*")
_GRADES = [
    (re.compile(r"小学|primary", re.I), "primary"),
    (re.compile(r"初中|junior|middle", re.I), "junior"),
    (re.compile(r"高中|senior|high", re.I), "senior"),
]
_GRADE_N = re.compile(r"grade[_\s-]?(\d{1,2})|([一二三四五六七八九十]{1,2}|\d{1,2})年级", re.I)
_TEXT_TASKS = [
    (re.compile(r"诗|poem|poetry", re.I), "poetry"),
    (re.compile(r"阅读|reading", re.I), "reading"),
    (re.compile(r"写作|作文|writing", re.I), "text_writing"),
]


class EduItem(BaseModel):
    """One standardized item (the paper's unified schema, plus where it came from)."""

    id: str
    task: str
    """`<level folder>/<file stem>`: one task of the layout."""
    level: str
    subject: str | None
    grade: str | None
    prompt: str
    options: dict[str, str] | None
    answer: Any
    explanation: str | None
    difficulty: int | None
    metric: str
    shape: str
    source: str
    """`path:line`."""
    raw: dict[str, Any] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    difficulty_label: str | None = None
    provenance: list[str] = Field(default_factory=list)
    calibration: float | None = None
    """Share of baseline-model answers that were right (objective items, after calibration)."""
    route: dict[str, Any] | None = None
    """The level router's verdict and the classifier's cross-check (after routing)."""

    def record(self) -> dict[str, Any]:
        """The item as a JSON-able dict."""
        return self.model_dump(mode="json")


class Unparsed(BaseModel):
    """A line the rules could not standardize, with the reason."""

    path: str
    line: int
    text: str
    reason: str
    task: str
    level: str
    shape: str

    @property
    def id(self) -> str:
        """Where the line is, as a record id."""
        return f"unparsed:{self.path}:{self.line}"


@dataclass
class ReadResult:
    """What a layout held: standardized items, unparsed lines and warnings."""

    items: list[EduItem] = field(default_factory=list)
    unparsed: list[Unparsed] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    """Per file: `file`, and how many items it held (`read`), the rules `parsed` and
    they `refused`."""


def parse_options(text: str) -> tuple[str, dict[str, str]]:
    """Split `ques_content` into the stem and its options (A., A．, A、, (A), A: ...).

    Options must run A, B, C, ... in order; anything else leaves no options.
    """
    marks = []
    expected = "A"
    for match in _OPTION.finditer(text):
        if match.group(1) == expected:
            marks.append(match)
            expected = chr(ord(expected) + 1)
    if len(marks) < 2:
        return text.strip(), {}
    stem = text[: marks[0].start()].strip()
    options = {}
    for k, match in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        options[match.group(1)] = text[match.end() : end].strip().rstrip("；;，,")
    return stem, options


def grade_of(name: str) -> str | None:
    """The grade a file name names, if any."""
    numbered = _GRADE_N.search(name)
    if numbered:
        return f"grade {numbered.group(1) or numbered.group(2)}"
    for pattern, grade in _GRADES:
        if pattern.search(name):
            return grade
    return None


def _shape(record: dict[str, Any], stem: str) -> str | None:
    keys = set(record)
    if "dialogue" in keys:
        return "dialogue"
    if "score" in keys and "question" in keys:
        return "essay"
    if keys & {"knowledge_point", "task_description"}:
        return "question_generation"
    if keys & {"topic", "teaching_design_requirements"}:
        return "teaching_design"
    if "ques_content" in keys:
        answer = record.get("ques_answer")
        letters = answer if isinstance(answer, list) else [answer]
        if all(isinstance(a, str) and re.fullmatch(r"\s*[A-H]{1,4}\s*", a) for a in letters):
            return "mc"  # one letter, or several (multi-answer: left to the agent)
        if re.search(r"[A-H][.．、]", str(record["ques_content"])) and (
            isinstance(answer, str) and len(answer.strip()) <= 4
        ):
            return "mc"  # options inside, an answer that is no single letter: for the agent
        for pattern, shape in _TEXT_TASKS:
            if pattern.search(stem):
                return shape
        return "reading"
    return None


def read_edueval(root: str | Path) -> ReadResult:
    """Read every JSONL under the level folders of `root`."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "not a folder: the EduEval layout is one folder per level")
    result = ReadResult()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise InputError(root, "no level folders (e.g. 1_memory/, 2_understanding/)")
    for folder in folders:
        try:
            level = find_level(folder.name).id
        except Exception:  # noqa: BLE001 - reported, not guessed
            result.warnings.append(f"{folder}: not an EduAbility level folder; skipped")
            continue
        files = sorted(folder.glob("*.jsonl"))
        if not files:
            result.warnings.append(f"{folder}: no .jsonl files")
        for path in files:
            _read_file(path, level, f"{folder.name}/{path.stem}", result)
    return result


def _read_file(path: Path, level: str, task: str, result: ReadResult) -> None:
    parsed, refused = len(result.items), len(result.unparsed)
    _read_lines(path, level, task, result)
    parsed, refused = len(result.items) - parsed, len(result.unparsed) - refused
    result.files.append(
        {"file": str(path), "read": parsed + refused, "parsed": parsed, "refused": refused}
    )


def _read_lines(path: Path, level: str, task: str, result: ReadResult) -> None:
    text = read_utf8(path)
    file_grade = grade_of(path.stem)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = parse_json_line(path, number, line)
        shape = _shape(record, path.stem)
        where = f"{path}:{number}"
        if shape is None:
            result.unparsed.append(
                Unparsed(
                    path=str(path),
                    line=number,
                    text=line,
                    reason="no known EduEval shape",
                    task=task,
                    level=level,
                    shape="?",
                )
            )
            continue
        item = _standardize(record, shape, task, level, file_grade, where, result)
        if isinstance(item, str):
            result.unparsed.append(
                Unparsed(
                    path=str(path),
                    line=number,
                    text=line,
                    reason=item,
                    task=task,
                    level=level,
                    shape=shape,
                )
            )
        else:
            for name in item.missing:
                result.warnings.append(f"{where}: field '{name}' is missing")
            result.items.append(item)


def _text(record: dict[str, Any], name: str, missing: list[str]) -> str | None:
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        missing.append(name)
        return None
    return str(value).strip()


def _standardize(
    record: dict[str, Any],
    shape: str,
    task: str,
    level: str,
    file_grade: str | None,
    where: str,
    result: ReadResult,
) -> EduItem | str:
    """The item, or the reason the rules cannot make one."""
    from .taxonomy import task_metric

    missing: list[str] = []
    grade = str(record["grade"]) if record.get("grade") not in (None, "") else file_grade
    if grade is None:
        missing.append("grade")
    subject = record.get("subject")
    subject = None if subject in (None, "") else str(subject)
    if subject is None:
        missing.append("subject")
    line = where.rsplit(":", 1)[1]
    if shape == "mc":
        fields = _mc_fields(record, missing, where, result)
    else:
        fields = _other_fields(record, shape, missing, grade, subject)
    if isinstance(fields, str):
        return fields
    if not fields["prompt"]:
        return "the item has no prompt text"
    return EduItem(
        id=str(record.get("id") or f"{task}#{line}"),
        task=task,
        level=level,
        subject=subject,
        grade=grade,
        metric=task_metric(shape),
        shape=shape,
        source=where,
        raw=record,
        missing=missing,
        **{"options": None, "explanation": None, "difficulty": None, **fields},
    )


def _mc_fields(
    record: dict[str, Any], missing: list[str], where: str, result: ReadResult
) -> dict[str, Any] | str:
    """Stem, options, answer letter and difficulty of a multiple-choice item (or why not)."""
    content = _text(record, "ques_content", missing) or ""
    prompt, options = parse_options(content)
    if len(options) < 2:
        return "options could not be split out of ques_content"
    answer = record.get("ques_answer")
    letters = answer if isinstance(answer, list) else [answer]
    letters = [str(a).strip().upper() for a in letters if a is not None]
    if len(letters) != 1:
        return f"ques_answer {answer!r}: one option letter expected"
    if letters[0] not in options:
        return f"ques_answer '{letters[0]}' is not one of the options {''.join(options)}"
    difficulty = None
    label = record.get("ques_difficulty")
    if label is not None:
        difficulty = DIFFICULTY.get(str(label).strip())
        if difficulty is None:
            result.warnings.append(f"{where}: field 'ques_difficulty': unknown label {label!r}")
    else:
        missing.append("ques_difficulty")
    return {
        "prompt": prompt,
        "options": options,
        "answer": letters[0],
        "explanation": _text(record, "ques_analyze", missing),
        "difficulty": difficulty,
        "difficulty_label": None if label is None else str(label),
    }


def _other_fields(
    record: dict[str, Any], shape: str, missing: list[str], grade: str | None, subject: str | None
) -> dict[str, Any] | str:
    """Prompt and answer of the items that are not multiple choice (or why not)."""
    if shape == "dialogue":
        answer = record.get("label")
        if not isinstance(answer, int) or not 1 <= answer <= 9:
            return f"label {answer!r}: an integer 1-9 expected"
        return {"prompt": _text(record, "dialogue", missing) or "", "answer": answer}
    if shape == "essay":
        prompt = _text(record, "ques_answer", missing) or ""
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
        what = _text(record, topic, missing) or ""
        ask = _text(record, ask_field, missing) or ""
        prompt = f"年级：{grade or ''}；学科：{subject or ''}；{label}：{what}\n{ask}".strip()
        return {"prompt": prompt, "answer": None}
    prompt = _text(record, "ques_content", missing) or ""  # poetry, reading, text writing
    answer = _text(record, "ques_answer", missing)
    if shape != "text_writing" and answer is None:
        return "ques_answer (the reference answer) is empty"
    return {"prompt": prompt, "answer": answer}


def from_agent(entry: Unparsed, value: dict[str, Any]) -> EduItem:
    """An item the standardization agent made of an unparsed line (provenance says so)."""
    raw = json.loads(entry.text) if entry.text.strip().startswith("{") else {}
    options = {str(k).strip().upper(): str(v).strip() for k, v in value["options"].items()}
    return EduItem(
        id=str(raw.get("id") or f"{entry.task}#{entry.line}"),
        task=entry.task,
        level=entry.level,
        subject=None if raw.get("subject") in (None, "") else str(raw.get("subject")),
        grade=grade_of(Path(entry.path).stem),
        prompt=value["question"].strip(),
        options=options,
        answer=value["answer"].strip().upper(),
        explanation=value.get("explanation") or None,
        difficulty=DIFFICULTY.get(str(raw.get("ques_difficulty", "")).strip()),
        metric="accuracy",
        shape="mc",
        source=f"{entry.path}:{entry.line}",
        raw=raw,
        provenance=[f"standardization agent (rules: {entry.reason})"],
    )
