"""Readers for the public EduEval layout, standardized by rules to one schema.

The layout: a root folder with one folder per cognitive level (`1_memory`, `2.理解`, `Ethics`,
`Creation`, ...; the root may itself be one level's folder), one JSONL per task inside
(`Primary_Moral.jsonl`, `Junior_Ethics Scenario.jsonl`, `初中历史知识.jsonl`). Each line's
shape is told by its keys (names in `fields`: `ques_content` or `question`, `ques_answer` or
`answer`, ...):

- `mc` (multiple choice, one answer) and `mc_multi` (several answers, scored as an exact set):
  `subject`, `ques_content` with the options inside in any of the ways `options` reads (or a
  separate `options` field), `ques_answer` (`"B"`, `["B"]`, `"BD"`, `["A", "E"]`, or an
  option's text), `ques_analyze`, `ques_difficulty`;
- `dialogue`: `dialogue`, `subject` (int), `label` (int 1-9);
- `essay`: `question`, `score` (0-100), `ques_answer` (the essay);
- `question_generation`: `id`, `grade`, `subject`, `knowledge_point`, `task_description`;
- `teaching_design`: `id`, `grade`, `subject`, `topic`, `teaching_design_requirements`;
- `poetry`, `reading`, `text_writing`: `ques_content`, `ques_answer` (text), told apart by the
  file name.

The level comes from the folder, the grade from the file name (`小学`/`primary`,
`初中`/`junior`/`middle`, `高中`/`senior`/`high`, `grade7`, `七年级`) unless the line has one.
A missing field is a warning, one per file and field with the count of lines and the first
of them, never filled in by a guess; a line the rules cannot parse comes back as `Unparsed`
with the reason, for the standardization agent. An item's id is `<task>/<id>` when the line
has an id, else `<task>#<line>`; a line repeating an earlier line's id with the same content
is dropped and listed, with different content it is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...api import InputError, RepeatedIds, parse_json_line, read_utf8
from .fields import (
    DIFFICULTY_FIELDS,
    GRADE,
    IDS,
    SUBJECT,
    difficulty,
    mc_fields,
    other_fields,
    pick,
    shape_of,
)
from .taxonomy import level as find_level

_GRADES = [
    (re.compile(r"小学|primary", re.I), "primary"),
    (re.compile(r"初中|junior|middle", re.I), "junior"),
    (re.compile(r"高中|senior|high", re.I), "senior"),
]
_GRADE_N = re.compile(r"grade[_\s-]?(\d{1,2})|([一二三四五六七八九十]{1,2}|\d{1,2})年级", re.I)


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
    """Per file: `file`, its `level`, the items it held (`read`), those the rules `parsed` and
    `refused`, the identical repeats dropped (`duplicates`), and why lines were refused
    (`reasons`, reason -> count)."""
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    """Lines dropped as identical repeats of an earlier line's id (`sources.duplicates`)."""


def grade_of(name: str) -> str | None:
    """The grade a file name names, if any."""
    numbered = _GRADE_N.search(name)
    if numbered:
        return f"grade {numbered.group(1) or numbered.group(2)}"
    for pattern, grade in _GRADES:
        if pattern.search(name):
            return grade
    return None


def _level_of(folder: Path) -> str | None:
    try:
        return find_level(folder.name).id
    except Exception:  # noqa: BLE001 - not a level's name: the caller says so
        return None


def read_edueval(root: str | Path) -> ReadResult:
    """Read every JSONL under the level folders of `root` (or of `root` itself, a level)."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(root, "not a folder: the EduEval layout is one folder per level")
    result = ReadResult()
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if _level_of(root) is not None and any(root.glob("*.jsonl")):
        folders = [root]  # one level's folder, given alone
    if not folders:
        raise InputError(root, "no level folders (e.g. 1_memory/, 2_understanding/, Ethics/)")
    for folder in folders:
        level = _level_of(folder)
        if level is None:
            result.warnings.append(f"{folder}: not an EduAbility level folder; skipped")
            continue
        files = sorted(folder.glob("*.jsonl"))
        if not files:
            result.warnings.append(f"{folder}: no .jsonl files")
        for path in files:
            _read_file(path, level, f"{folder.name}/{path.stem}", result)
    return result


def _read_file(path: Path, level: str, task: str, result: ReadResult) -> None:
    before = len(result.items), len(result.unparsed), len(result.duplicates)
    _read_lines(path, level, task, result)
    parsed = len(result.items) - before[0]
    refused = result.unparsed[before[1] :]
    duplicates = len(result.duplicates) - before[2]
    reasons: dict[str, int] = {}
    for entry in refused:
        reasons[entry.reason] = reasons.get(entry.reason, 0) + 1
    result.files.append(
        {
            "file": str(path),
            "level": level,
            "read": parsed + len(refused) + duplicates,
            "parsed": parsed,
            "refused": len(refused),
            "duplicates": duplicates,
            "reasons": reasons,
        }
    )


def _read_lines(path: Path, level: str, task: str, result: ReadResult) -> None:
    text = read_utf8(path)
    source = _TaskFile(task, level, grade_of(path.stem))
    repeated = RepeatedIds()
    notes: dict[str, list[int]] = {}
    read = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = parse_json_line(path, number, line)
        id_field, given_id = pick(record, IDS)
        if given_id is not None and not repeated.admit(
            str(given_id), record, path, number, id_field
        ):
            continue
        read += 1
        shape = shape_of(record, path.stem)
        where = f"{path}:{number}"

        def note(warning: str, line: int = number) -> None:
            notes.setdefault(warning, []).append(line)

        item = (
            "no known EduEval shape"
            if shape is None
            else _standardize(record, shape, source, where, note)
        )
        if isinstance(item, str):
            result.unparsed.append(
                Unparsed(
                    path=str(path),
                    line=number,
                    text=line,
                    reason=item,
                    task=task,
                    level=level,
                    shape=shape or "?",
                )
            )
        else:
            for name in item.missing:
                note(f"field '{name}' is missing")
            result.items.append(item)
    result.duplicates.extend(repeated.dropped)
    result.warnings += file_warnings(path, notes, read)


def file_warnings(path: Path, notes: dict[str, list[int]], lines: int, shown: int = 5) -> list[str]:
    """One warning per file and problem (a field missing, a label unknown), with its count.

    `notes` maps each problem to the lines it was found on; `lines` is how many the file has.
    """
    warnings = []
    for problem, found in notes.items():
        listed = ", ".join(str(n) for n in found[:shown]) + (", …" if len(found) > shown else "")
        where = f"line {listed}" if len(found) == 1 else f"lines {listed}"
        warnings.append(f"{path}: {problem} on {len(found)} of {lines} lines ({where})")
    return warnings


def item_id(task: str, record: dict[str, Any], line: int | str) -> str:
    """`<task>/<id>` for a line with an id, `<task>#<line>` for one without."""
    _, given = pick(record, IDS)
    return f"{task}/{given}" if given is not None else f"{task}#{line}"


@dataclass(frozen=True)
class _TaskFile:
    """What a task file says of all its lines: the task, the level, the grade in its name."""

    task: str
    level: str
    grade: str | None


def _standardize(
    record: dict[str, Any],
    shape: str,
    source: _TaskFile,
    where: str,
    note: Callable[[str], None],
) -> EduItem | str:
    """The item, or the reason the rules cannot make one."""
    from .taxonomy import task_metric

    task, level = source.task, source.level
    missing: list[str] = []
    grade_field, grade = pick(record, GRADE)
    grade = source.grade if grade is None else str(grade)
    if grade is None:
        missing.append(grade_field)
    subject_field, subject = pick(record, SUBJECT)
    subject = None if subject is None else str(subject)
    if subject is None:
        missing.append(subject_field)
    if shape == "mc":
        fields = mc_fields(record, missing, note)
    else:
        fields = other_fields(record, shape, missing, grade, subject)
    if isinstance(fields, str):
        return fields
    if not fields["prompt"]:
        return "the item has no prompt text"
    shape = fields.pop("shape", shape)
    return EduItem(
        id=item_id(task, record, where.rsplit(":", 1)[1]),
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


def from_agent(entry: Unparsed, value: dict[str, Any], letters: list[str]) -> EduItem:
    """An item the standardization agent made of an unparsed line (provenance says so).

    `letters` are the answer's option letters: several make a multiple-answer item.
    """
    raw = json.loads(entry.text) if entry.text.strip().startswith("{") else {}
    options = {str(k).strip().upper(): str(v).strip() for k, v in value["options"].items()}
    _, subject = pick(raw, SUBJECT)
    label_field, label = pick(raw, DIFFICULTY_FIELDS)
    return EduItem(
        id=item_id(entry.task, raw, entry.line),
        task=entry.task,
        level=entry.level,
        subject=None if subject is None else str(subject),
        grade=grade_of(Path(entry.path).stem),
        prompt=value["question"].strip(),
        options=options,
        answer="".join(letters),
        explanation=value.get("explanation") or None,
        difficulty=None if label is None else difficulty(label, label_field, lambda _: None),
        difficulty_label=None if label is None else str(label),
        metric="accuracy",
        shape="mc" if len(letters) == 1 else "mc_multi",
        source=f"{entry.path}:{entry.line}",
        raw=raw,
        provenance=[f"standardization agent (rules: {entry.reason})"],
    )
