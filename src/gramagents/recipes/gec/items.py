"""Grammar-item lists with CEFR levels, as the GEC recipe reads them (CTSEG §3.1).

Like the CEFR-J Grammar Profile: an id, a level (A1–C2), a name and optional notes per item.
Items may carry hand-made minimal pairs (the paper's are all hand-made), so that banks can be
built with the agents off.

JSONL or YAML, one item per record::

    {"id": "173", "level": "B1", "name": "Relative pronoun (nominative) (which)",
     "notes": "...", "pairs": [{"ungrammatical": "...", "correction": "...",
                                "alternatives": ["..."]}]}

CSV, one row per pair (or per item, with the pair columns empty): `id, level, name` and the
optional `notes, ungrammatical, correction, alternatives` (alternatives joined by ` | `).

A record, or a CSV row, that repeats an earlier one whole is dropped and listed (the build
manifest's `source.duplicates`); the same id (in CSV, item and ungrammatical sentence) with
other content is an error naming the file, the line and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...api import (
    GrammarPoint,
    InputError,
    MinimalPair,
    ReadOptions,
    RepeatedIds,
    SourceData,
    SourceRef,
    csv_rows,
    jsonl_rows,
    load_yaml_with_lines,
    point_source,
    read_utf8,
    source_reader,
    unique_points,
)

LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")
REQUIRED = ("id", "level", "name")
OPTIONAL = ("notes", "pairs", "language")
CSV_OPTIONAL = ("notes", "ungrammatical", "correction", "alternatives")


def read_grammar_items(
    path: str | Path, dropped: list[dict[str, Any]] | None = None
) -> list[GrammarPoint]:
    """Read a grammar-item list; the format follows the file extension.

    A record (or CSV row) repeating an earlier one whole is left out and listed in `dropped`;
    the same id (in CSV, item and ungrammatical sentence) with other content is an error.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv", ".yaml", ".yml"):
        raise InputError(path, "unknown list format: use .jsonl, .csv, .yaml or .yml")
    text = read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty: no grammar items", line=1)
    found: list[dict[str, Any]] = []
    if suffix == ".csv":
        items = _from_csv(path, text, found)
    else:
        if suffix == ".jsonl":
            records = list(jsonl_rows(path, text))
        else:
            data, lines = load_yaml_with_lines(path, text)
            if isinstance(data, dict) and set(data) == {"items"}:
                data = data["items"]
            if not isinstance(data, list):
                raise InputError(
                    path, "expected a list of grammar items (or an 'items:' list)", line=1
                )
            records = [(lines.get(id(r), 1), r) for r in data if isinstance(r, dict)]
        items = [_item(path, line, record) for line, record in records]
    if not items:
        raise InputError(path, "no grammar items found", line=1)
    items = unique_points(items, path, found) if suffix != ".csv" else items
    if dropped is not None:
        dropped.extend(found)
    return items


def _text_field(record: dict[str, Any], name: str, path: Path, line: int) -> str:
    value = record.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and name == "id":
        value = str(value)
    if value is None:
        raise InputError(path, "missing", line=line, field=name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, "must be a non-empty string", line=line, field=name)
    return value.strip()


def _level(record: dict[str, Any], path: Path, line: int) -> str:
    level = _text_field(record, "level", path, line).upper()
    if level not in LEVELS:
        raise InputError(
            path,
            f"must be a CEFR level ({', '.join(LEVELS)}), not '{level}'",
            line=line,
            field="level",
        )
    return level


def _pair(raw: Any, path: Path, line: int, field: str) -> MinimalPair:
    if not isinstance(raw, dict):
        raise InputError(
            path, "each pair is a mapping with ungrammatical and correction", line=line, field=field
        )
    wrong = _text_field(raw, "ungrammatical", path, line)
    right = _text_field(raw, "correction", path, line)
    alternatives = raw.get("alternatives") or []
    if isinstance(alternatives, str):
        alternatives = [a for a in (x.strip() for x in alternatives.split("|")) if a]
    if not isinstance(alternatives, list) or not all(isinstance(a, str) for a in alternatives):
        raise InputError(
            path, "must be a list of sentences", line=line, field=f"{field}.alternatives"
        )
    if wrong == right:
        raise InputError(
            path,
            "the correction repeats the ungrammatical sentence",
            line=line,
            field=f"{field}.correction",
        )
    alternatives = [a.strip() for a in alternatives if a.strip()]
    if wrong in alternatives or right in alternatives:
        raise InputError(
            path,
            "an alternative repeats the sentence or its correction",
            line=line,
            field=f"{field}.alternatives",
        )
    return MinimalPair(ungrammatical=wrong, correction=right, alternatives=alternatives)


def _item(path: Path, line: int, record: dict[str, Any]) -> GrammarPoint:
    unknown = sorted(set(record) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise InputError(
            path,
            f"unknown field (known: {', '.join(REQUIRED + OPTIONAL)})",
            line=line,
            field=unknown[0],
        )
    level = _level(record, path, line)
    raw_pairs = record.get("pairs") or []
    if not isinstance(raw_pairs, list):
        raise InputError(path, "must be a list of pairs", line=line, field="pairs")
    return GrammarPoint(
        id=_text_field(record, "id", path, line),
        category=level,
        level=level,
        name=_text_field(record, "name", path, line),
        description=str(record.get("notes") or "").strip(),
        language=str(record.get("language") or "en"),
        pairs=[_pair(p, path, line, f"pairs[{i}]") for i, p in enumerate(raw_pairs)],
        source=[SourceRef(path=str(path), line=line)],
    )


def _from_csv(path: Path, text: str, dropped: list[dict[str, Any]]) -> list[GrammarPoint]:
    items: dict[str, GrammarPoint] = {}
    rows = RepeatedIds("row")
    for line, row in csv_rows(path, text, REQUIRED):
        item_id = _text_field(row, "id", path, line)
        wrong = (row.get("ungrammatical") or "").strip()
        key = f"{item_id}: {wrong}" if wrong else item_id
        if not rows.admit(key, row, path, line, field="ungrammatical" if wrong else "id"):
            continue  # the same row twice
        header = {"level": _level(row, path, line), "name": _text_field(row, "name", path, line)}
        item = items.get(item_id)
        if item is None:
            item = items[item_id] = GrammarPoint(
                id=item_id,
                category=header["level"],
                level=header["level"],
                name=header["name"],
                description=(row.get("notes") or "").strip(),
                language="en",
                source=[SourceRef(path=str(path), line=line)],
            )
        elif (item.level, item.name) != (header["level"], header["name"]):
            raise InputError(
                path,
                f"item '{item_id}' was given a different level or name on "
                f"line {item.source[0].line}",
                line=line,
                field="name",
            )
        else:
            item.source.append(SourceRef(path=str(path), line=line))
        if wrong or (row.get("correction") or "").strip():
            item.pairs.append(_pair(row, path, line, "ungrammatical"))
    dropped.extend(rows.dropped)
    return list(items.values())


@source_reader("grammar-items", unit="grammar items")
def grammar_items_source(path: Path, options: ReadOptions) -> SourceData:
    """The build source: the points of `path`, one instance per sentence."""
    dropped: list[dict[str, Any]] = []
    data = point_source(read_grammar_items(path, dropped), options)
    data.duplicates = dropped
    return data
