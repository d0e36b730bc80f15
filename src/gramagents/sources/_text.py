"""Reading user files as text, with errors that point at the offending line."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic_core import from_json

from ..errors import InputError
from .duplicates import RepeatedIds

P = TypeVar("P")


def read_utf8(path: Path) -> str:
    """Read a UTF-8 file (with or without BOM); undecodable bytes name their line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(path, "file not found") from None
    except IsADirectoryError:
        raise InputError(path, "is a directory, expected a file") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            path,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); "
            "save the file as UTF-8",
            line=line,
        ) from None


MAX_DEPTH = 200
"""Deepest nesting of JSON (and YAML) values a reader takes: deeper values could not be
written back (serialisers stop at about this depth) and no record needs them."""


def parse_json_line(path: Path, number: int, line: str | bytes) -> dict[str, Any]:
    r"""The JSON object on line `number` of `path`, or the one-line error saying what is wrong.

    Besides syntax, the error names a value nested more than `MAX_DEPTH` deep and a string
    holding an unpaired surrogate (`"\ud800"`, which no file can store as UTF-8).
    """
    try:
        obj = from_json(line)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            raise InputError(
                path, f"JSON nested more than {MAX_DEPTH} levels deep", line=number
            ) from None
        obj = _loads(path, number, line)  # the standard parser's message says what is wrong
        check_values(path, obj, line=number)
    if not isinstance(obj, dict):
        raise InputError(path, "each line must be a JSON object", line=number)
    return obj


def _loads(path: Path, number: int, line: str | bytes) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"invalid JSON ({exc.msg} at column {exc.colno})", line=number
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            path,
            f"not valid UTF-8 (byte at column {exc.start + 1}); save the file as UTF-8",
            line=number,
        ) from None
    except RecursionError:
        raise InputError(
            path, f"JSON nested more than {MAX_DEPTH} levels deep", line=number
        ) from None


def check_values(
    path: Path, value: Any, line: int | None = None, lines: dict[Any, int] | None = None
) -> None:
    """Refuse a parsed value nested deeper than `MAX_DEPTH` or holding an unpaired surrogate.

    `lines` (from `load_yaml_with_lines`) locates the offending value's line.
    """
    found = _first_problem(value)
    if found is None:
        return
    where, problem = found
    if lines is not None:
        line, _ = locate(value, lines, tuple(where))
    field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where).lstrip(".")
    raise InputError(path, problem, line=line, field=field or None)


def _first_problem(value: Any) -> tuple[list[Any], str] | None:
    """Where the first value too deep or with a surrogate is (key path), and what is wrong."""
    stack: list[tuple[list[Any], Any]] = [([], value)]
    while stack:
        where, node = stack.pop()
        if len(where) > MAX_DEPTH:
            return where[:MAX_DEPTH], f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return where, _UNPAIRED
        elif isinstance(node, dict):
            for key, child in reversed(list(node.items())):
                if isinstance(key, str) and _SURROGATE.search(key):
                    return where, f"a key {_UNPAIRED}"
                stack.append(([*where, key], child))
        elif isinstance(node, list):
            stack.extend(([*where, i], child) for i, child in reversed(list(enumerate(node))))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_UNPAIRED = (
    "holds an unpaired surrogate (an escape such as \\ud800, which is no character); "
    "write the text as UTF-8"
)


def iter_jsonl(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL text."""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, parse_json_line(path, number, line)


CSV_FIELD_LIMIT = 2**31 - 1
"""Longest CSV field read, in characters: any field a file in memory can hold. The csv
module's own default (131,072) is a guard against runaway quoting, not a size any of our files
keeps to: a reviewer's edit of a long passage, a long essay, a long sentence are data."""


def allow_long_csv_fields() -> None:
    """Raise the csv module's field limit to `CSV_FIELD_LIMIT` (never lower it).

    The limit is the csv module's, for the whole process; every CSV reader of gramagents calls
    this first, so that a long field reads as any other.
    """
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)


def csv_reader(lines: Iterable[str], **options: Any) -> Any:
    """`csv.reader` over `lines`, with fields of any length (`allow_long_csv_fields`)."""
    allow_long_csv_fields()
    return csv.reader(lines, **options)


def iter_csv(
    path: Path, text: str, required: tuple[str, ...]
) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) for each data row; the header must name `required` columns."""
    reader = csv_reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, "file is empty", line=1) from None
    except csv.Error as exc:
        raise InputError(path, f"malformed CSV ({exc})", line=1) from None
    columns = [c.strip() for c in header]
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputError(
            path,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
            f"(header has: {', '.join(columns) or 'nothing'})",
            line=1,
        )
    seen: dict[str, int] = {}
    for index, name in enumerate(columns):
        if name in seen and name:
            raise InputError(path, f"column '{name}' appears twice in the header", line=1)
        seen[name] = index
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(path, f"malformed CSV ({exc})", line=line) from None
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(columns):
            raise InputError(
                path, f"row has {len(row)} cells but the header has {len(columns)}", line=line
            )
        yield line, {name: (row[i] if i < len(row) else "") for name, i in seen.items()}


MAX_ALIAS_VALUES = 100_000
"""Values YAML aliases may add to a document when expanded (`*name` repeats the value `&name`
marks). A few aliases of small values stay far below it; nested aliases that repeat one
another (an "alias bomb": a few hundred bytes that expand to billions of values) are refused
before any value is built, so that no reader, check or hash walks them."""


def load_yaml_with_lines(path: Path, text: str) -> tuple[Any, dict[Any, int]]:
    """Parse YAML safely; also return a map from id() of each mapping/list to its 1-based line.

    The one YAML reader of gramagents (sources, suites, recipes, rubric and prompt front
    matter, taxonomies and patterns): plain data only (`yaml.SafeLoader`), no value nested more
    than `MAX_DEPTH` deep, aliases that refer to the value holding them refused and their
    expansion bounded by `MAX_ALIAS_VALUES`. Each failure is one `InputError` naming the file.
    """
    lines: dict[Any, int] = {}

    class _Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        value = yaml.SafeLoader.construct_mapping(loader, node, deep=True)
        lines[id(value)] = node.start_mark.line + 1
        for key_node, _ in node.value:
            lines[id(value), key_node.value] = key_node.start_mark.line + 1
        return value

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _check_aliases(path, node)
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(path, f"invalid YAML ({problem})", line=line) from None
    except RecursionError:
        raise InputError(path, f"YAML nested more than {MAX_DEPTH} levels deep") from None
    finally:
        loader.dispose()
    check_values(path, data, lines=lines)
    return data, lines


def _check_aliases(path: Path, root: yaml.Node) -> None:
    """Refuse a document whose aliases refer to their own holder or expand too far.

    Aliases make the composed nodes a graph in which a node has several parents; the size of
    the document once every alias is expanded is counted over that graph, each node once.
    """
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        if key in open_nodes:  # reached again from inside itself
            raise InputError(
                path,
                "a YAML alias refers to the value that holds it (a value that never ends)",
                line=node.start_mark.line + 1,
            )
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_VALUES:
        raise InputError(
            path,
            f"YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values (aliases nested in "
            "aliases); write the values out, or repeat fewer of them",
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def unique_points(
    points: list[P], path: Path, dropped: list[dict[str, Any]] | None = None
) -> list[P]:
    """`points` (with `id` and `source` rows) without identical repeats of an id.

    A repeat with the same content (all but where it was read) is left out and listed in
    `dropped`; one with other content is the error naming its line.
    """
    repeated = RepeatedIds()
    kept = []
    for point in points:
        content = point.model_dump(exclude={"source"})  # type: ignore[attr-defined]
        line = point.source[0].line  # type: ignore[attr-defined]
        if repeated.admit(point.id, content, path, line):  # type: ignore[attr-defined]
            kept.append(point)
    if dropped is not None:
        dropped.extend(repeated.dropped)
    return kept


def locate(data: Any, lines: dict[Any, int], loc: tuple[Any, ...]) -> tuple[int | None, str]:
    """Line and dotted field path (`nodes[2].options`) of a pydantic error location.

    `data` and `lines` come from `load_yaml_with_lines`; the line is that of the deepest part
    of `loc` found in the data.
    """
    line: int | None = None
    node = data
    path = ""
    for part in loc:
        if isinstance(node, dict) and part in node:
            line = lines.get((id(node), part), line)
            node = node[part]
            path = f"{path}.{part}" if path else str(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            line = lines.get(id(node), line)
            path = f"{path}[{part}]"
    return line, path
