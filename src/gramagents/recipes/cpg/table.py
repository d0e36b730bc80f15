"""Grammar-point tables (JSONL, CSV or YAML) as read by the CPG recipe.

JSONL and YAML hold one point per record::

    {"id": "1063", "category": "“是”字句", "level": 1, "name": "表示等同或类属",
     "description": "...", "examples": ["..."], "confusers": ["..."]}

CSV holds one sentence per row, with columns ``id, category, level, name, sentence`` and the
optional ``description``, ``kind`` (``example`` or ``confuser``, default ``example``),
``language`` and ``group``. Rows of one point must agree on its category, group, level, name
and description.

``name`` may be empty when the category alone names the point (the released label
``陈述句``); the point is then shown as its category.

``group`` sets the points a point is told apart from (CAT-GRA's options, `group-pairs`
negatives) where that is not its category, as in the released CPG-EVAL banks, whose groups mix
label prefixes. Without the field (or column) a point's group is its category; an empty value
puts the point in no group.

A sentence listed twice for one point is kept once, with a warning naming the file, line and
field (the released CON-INS-F10 bank repeats one).

A record, or a CSV row, that repeats an earlier one whole is dropped and listed (the build
manifest's `source.duplicates`); the same point id (in CSV, point and sentence) with other
content is an error naming the file, the line and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ... import api

REQUIRED = ("id", "category", "level", "name")
OPTIONAL = ("description", "examples", "confusers", "language", "group")
CSV_REQUIRED = (*REQUIRED, "sentence")

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def detect_language(texts: list[str]) -> str:
    """`zh` when the texts contain CJK characters, else `en`."""
    return "zh" if any(_CJK.search(t) for t in texts) else "en"


def read_grammar_table(
    path: str | Path,
    dropped: list[dict[str, Any]] | None = None,
    notes: list[str] | None = None,
) -> list[api.GrammarPoint]:
    """Read a grammar-point table; the format follows the file extension.

    A record (or CSV row) that repeats an earlier one whole is left out and listed in
    `dropped`; the same id (point and sentence, in CSV) with other content is an error. A
    sentence a record lists twice is kept once, with a line in `notes`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    readers = {".jsonl": _read_jsonl, ".csv": _read_csv, ".yaml": _read_yaml, ".yml": _read_yaml}
    if suffix not in readers:
        raise api.InputError(path, "unknown table format: use .jsonl, .csv, .yaml or .yml")
    text = api.read_utf8(path)
    if not text.strip():
        raise api.InputError(path, "file is empty: no grammar points", line=1)
    found: list[dict[str, Any]] = []
    said: list[str] = []
    points = readers[suffix](path, text, found, said)
    if dropped is not None:
        dropped.extend(found)
    if notes is not None:
        notes.extend(said)
    if not points:
        raise api.InputError(path, "no grammar points found", line=1)
    return points


def _level(value: Any, path: Path, line: int) -> int | str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise api.InputError(
            path, "must be an integer or a label such as A2", line=line, field="level"
        )
    if isinstance(value, str):
        value = value.strip()
        if not value:
            raise api.InputError(path, "is empty", line=line, field="level")
        return int(value) if value.isdigit() else value
    return value


def _text_field(record: dict[str, Any], name: str, path: Path, line: int) -> str:
    value = record.get(name)
    if value is None:
        raise api.InputError(path, "missing", line=line, field=name)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name == "id":
        value = str(value)
    if not isinstance(value, str):
        raise api.InputError(path, "must be a string", line=line, field=name)
    if not value.strip():
        raise api.InputError(path, "is empty", line=line, field=name)
    return value.strip()


def _name(record: dict[str, Any], path: Path, line: int) -> str:
    """A point's name; empty when the category alone names the point (`陈述句`)."""
    value = record.get("name")
    if value is None:
        raise api.InputError(path, "missing", line=line, field="name")
    if not isinstance(value, str):
        raise api.InputError(path, "must be a string", line=line, field="name")
    return value.strip()


def _sentences(
    record: dict[str, Any], name: str, path: Path, line: int, notes: list[str]
) -> list[str]:
    value = record.get(name, [])
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise api.InputError(path, "must be a list of sentences", line=line, field=name)
    cleaned = [s.strip() for s in value]
    if any(not s for s in cleaned):
        raise api.InputError(path, "contains an empty sentence", line=line, field=name)
    kept = list(dict.fromkeys(cleaned))
    for sentence in _repeated(cleaned):
        notes.append(f"{path}:{line}: {name}: sentence '{sentence}' is listed twice; kept once")
    return kept


def _repeated(sentences: list[str]) -> list[str]:
    seen: set[str] = set()
    twice = []
    for sentence in sentences:
        if sentence in seen:
            twice.append(sentence)
        seen.add(sentence)
    return twice


def _group(value: Any, path: Path, line: int) -> str | None:
    """A point's group: None (absent: its category), "" (none) or a name."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise api.InputError(path, "must be a string", line=line, field="group")
    return value.strip()


def _point_from_record(
    record: dict[str, Any], path: Path, line: int, notes: list[str]
) -> api.GrammarPoint:
    unknown = sorted(set(record) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise api.InputError(
            path,
            f"unknown field (known: {', '.join(REQUIRED + OPTIONAL)})",
            line=line,
            field=unknown[0],
        )
    point_id = _text_field(record, "id", path, line)
    category = _text_field(record, "category", path, line)
    if "level" not in record:
        raise api.InputError(path, "missing", line=line, field="level")
    level = _level(record["level"], path, line)
    name = _name(record, path, line)
    examples = _sentences(record, "examples", path, line, notes)
    if not examples:
        raise api.InputError(
            path, "needs at least one example sentence", line=line, field="examples"
        )
    confusers = _sentences(record, "confusers", path, line, notes)
    language = record.get("language") or detect_language([name, *examples])
    if not isinstance(language, str):
        raise api.InputError(
            path, "must be a language code such as zh or en", line=line, field="language"
        )
    return api.GrammarPoint(
        id=point_id,
        category=category,
        group=_group(record["group"], path, line) if "group" in record else None,
        level=level,
        name=name,
        description=str(record.get("description") or "").strip(),
        language=language,
        examples=examples,
        confusers=confusers,
        source=[api.SourceRef(path=str(path), line=line)],
    )


def _read_jsonl(
    path: Path, text: str, dropped: list[dict[str, Any]], notes: list[str]
) -> list[api.GrammarPoint]:
    points = [
        _point_from_record(obj, path, line, notes) for line, obj in api.jsonl_rows(path, text)
    ]
    return api.unique_points(points, path, dropped)


def _read_yaml(
    path: Path, text: str, dropped: list[dict[str, Any]], notes: list[str]
) -> list[api.GrammarPoint]:
    data, lines = api.load_yaml_with_lines(path, text)
    if isinstance(data, dict) and set(data) == {"points"}:
        data = data["points"]
    if data is None:
        raise api.InputError(path, "file is empty: no grammar points", line=1)
    if not isinstance(data, list):
        raise api.InputError(
            path, "expected a list of grammar points (or a 'points:' list)", line=1
        )
    points = []
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise api.InputError(path, f"entry {index + 1} is not a mapping", line=None)
        points.append(_point_from_record(record, path, lines.get(id(record), 1), notes))
    return api.unique_points(points, path, dropped)


def _read_csv(
    path: Path, text: str, dropped: list[dict[str, Any]], notes: list[str]
) -> list[api.GrammarPoint]:
    by_id: dict[str, dict[str, Any]] = {}
    rows = api.RepeatedIds("sentence")
    for line, row in api.csv_rows(path, text, CSV_REQUIRED):
        point_id = _text_field(row, "id", path, line)
        sentence = _text_field(row, "sentence", path, line)
        if not rows.admit(f"{point_id}: {sentence}", row, path, line, field="sentence"):
            continue  # the same row twice
        kind = (row.get("kind") or "example").strip().lower()
        if kind not in ("example", "confuser"):
            raise api.InputError(
                path, f"must be 'example' or 'confuser', not '{kind}'", line=line, field="kind"
            )
        header = {
            "category": _text_field(row, "category", path, line),
            "level": _level(row.get("level", ""), path, line),
            "name": _name(row, path, line),
            "description": (row.get("description") or "").strip(),
            "group": None if row.get("group") is None else row["group"].strip(),
        }
        entry = by_id.get(point_id)
        if entry is None:
            entry = by_id[point_id] = {
                "header": header,
                "line": line,
                "lines": [line],
                "examples": [],
                "confusers": [],
                "language": (row.get("language") or "").strip(),
            }
        else:
            for key, value in header.items():
                if key == "description" and not value:
                    continue
                if entry["header"][key] != value:
                    raise api.InputError(
                        path,
                        f"point '{point_id}' was given a different {key} on line {entry['line']}",
                        line=line,
                        field=key,
                    )
            entry["lines"].append(line)
        entry["examples" if kind == "example" else "confusers"].append(sentence)

    dropped.extend(rows.dropped)
    return [_csv_point(point_id, entry, path) for point_id, entry in by_id.items()]


def _csv_point(point_id: str, entry: dict[str, Any], path: Path) -> api.GrammarPoint:
    """The point that a CSV table's rows of one id describe."""
    if not entry["examples"]:
        raise api.InputError(
            path, f"point '{point_id}' has no example rows", line=entry["line"], field="kind"
        )
    header = entry["header"]
    return api.GrammarPoint(
        id=point_id,
        category=header["category"],
        group=header["group"],
        level=header["level"],
        name=header["name"],
        description=header["description"],
        language=entry["language"] or detect_language([header["name"], *entry["examples"]]),
        examples=entry["examples"],
        confusers=entry["confusers"],
        source=[api.SourceRef(path=str(path), line=n) for n in entry["lines"]],
    )


@api.source_reader("grammar-table", unit="grammar points")
def grammar_table_source(path: Path, options: api.ReadOptions) -> api.SourceData:
    """The build source: the points of `path`, one instance per sentence."""
    dropped: list[dict[str, Any]] = []
    notes: list[str] = []
    data = api.point_source(read_grammar_table(path, dropped, notes), options)
    data.duplicates = dropped
    data.warnings = notes
    return data
