"""CLiMP (`--format climp`): Chinese minimal pairs, one CSV file per paradigm, in three layouts.

The released corpus (16 files of 1,000 pairs) comes in two of them, and files written by hand
in the third:

- **unnamed columns**, the header `,0,1,2,3` of a pandas dump: a row index, then the
  phenomenon, the paradigm, the sentence and its label (1 grammatical, 0 not), two rows per
  pair (fifteen of the released files);
- **sentences only**, one per line, no header, a pair on two consecutive lines, the
  grammatical sentence first (`ba_construction_1000.csv`);
- **named columns**: a header naming `sentence` and `label` (and optionally `phenomenon`,
  `paradigm`, `index`; other columns, such as an unnamed row index, are ignored).

The two rows of a pair are consecutive; in the labelled layouts either may come first, and one
must be labelled 1 and the other 0. UTF-8 with or without BOM, LF or CRLF line ends, quoted
fields (a sentence with a comma in it), blank lines anywhere. Where no phenomenon or paradigm
is given, both are the file's name without its size suffix (`ba_construction_1000.csv`:
`ba_construction`). A file that cannot be read this way is one error naming the file, the line
and the field; so is a file without a header whose lines are CSV records rather than
sentences (a row index first, or a 0/1 label last): read as sentences, whole records would be
scored and the pair order guessed. A folder is read with its sub-folders, as the released zip
unpacks (`CLiMP_corpus/` beside `__MACOSX/`, which is skipped).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ...api import Dataset, InputError, Item, csv_reader, dataset_format, read_utf8
from .reader import dataset_of, files_in, pair_item, shown_name

UNNAMED = ("phenomenon", "paradigm", "sentence", "label")
"""What the columns `0`, `1`, `2`, `3` of the released files hold."""

LAYOUTS = {
    "named": "named columns",
    "unnamed": "unnamed columns: phenomenon, paradigm, sentence, label",
    "sentences": "sentences only, a pair on consecutive lines, grammatical first",
}


_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass
class Row:
    """One sentence of a CLiMP file."""

    line: int
    sentence: str
    label: int | None = None
    """1 grammatical, 0 not; None in the sentences-only layout."""
    cells: dict[str, str] = field(default_factory=dict)


def _csv_rows(file: Path, text: str) -> list[tuple[int, list[str]]]:
    """(first line, cells) of every non-blank CSV record."""
    reader = csv_reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return rows
        except csv.Error as exc:
            lines = text.splitlines()
            column = _bad_cell(lines[line - 1] if line <= len(lines) else "")
            header = rows[0][1] if rows else []
            raise InputError(
                file,
                f"malformed CSV ({exc}; a quote inside a quoted sentence is written twice)",
                line=line,
                field=_column_name(header, column),
            ) from None
        if any(cell.strip() for cell in row):
            rows.append((line, row))


def _bad_cell(raw: str) -> int:
    """Index of the cell of a CSV line whose quoting is broken (unclosed, or text after it)."""
    cell, quoted, at = 0, False, 0
    while at < len(raw):
        char = raw[at]
        if quoted and char == '"':
            if raw[at + 1 : at + 2] == '"':
                at += 1  # a doubled quote inside the quotes
            elif raw[at + 1 : at + 2] not in ("", ","):
                return cell  # text after the closing quote
            else:
                quoted = False
        elif not quoted and char == '"' and (at == 0 or raw[at - 1] == ","):
            quoted = True
        elif not quoted and char == ",":
            cell += 1
        at += 1
    return cell


def _column_name(header: list[str], column: int) -> str:
    """What the `column`-th cell of a row holds, by the file's header."""
    if _layout(header) == "unnamed":
        at = column - (len(header) - len(UNNAMED))
        if 0 <= at < len(UNNAMED):
            return UNNAMED[at]
    elif column < len(header) and header[column].strip():
        return header[column].strip().lower()
    return f"column {column + 1}"


def _layout(header: list[str]) -> str:
    cells = [c.strip().lower() for c in header]
    if "sentence" in cells:
        return "named"
    if cells in (["", "0", "1", "2", "3"], ["0", "1", "2", "3"]):
        return "unnamed"
    return "sentences"


def _label(file: Path, line: int, value: str, where: str = "") -> int:
    if value.strip() not in ("0", "1"):
        raise InputError(
            file,
            f"must be 1 (grammatical) or 0{where}, not '{value.strip()}'",
            line=line,
            field="label",
        )
    return int(value)


def _named_rows(file: Path, rows: list[tuple[int, list[str]]]) -> list[Row]:
    header = [c.strip().lower() for c in rows[0][1]]
    if "label" not in header:
        raise InputError(
            file, "missing column (the header names sentence but no label)", line=1, field="label"
        )
    at = {name: i for i, name in reversed(list(enumerate(header))) if name}
    out: list[Row] = []
    for line, row in rows[1:]:
        cells = {name: row[i].strip() for name, i in at.items() if i < len(row)}
        for name in ("sentence", "label"):
            if name not in cells:
                raise InputError(file, "missing (the row is short)", line=line, field=name)
        out.append(Row(line, cells["sentence"], _label(file, line, cells["label"]), cells))
    return out


def _unnamed_rows(file: Path, rows: list[tuple[int, list[str]]]) -> list[Row]:
    width = len(rows[0][1])
    offset = width - len(UNNAMED)  # 1 when the first column is the row index
    out: list[Row] = []
    for line, row in rows[1:]:
        if len(row) < width:
            missing = UNNAMED[len(row) - offset] if len(row) >= offset else UNNAMED[0]
            raise InputError(
                file,
                f"missing: the row has {len(row)} cells, the header {width}",
                line=line,
                field=missing,
            )
        if len(row) > width:
            raise InputError(
                file,
                f"the row has {len(row)} cells, the header {width}: quote a sentence that has a "
                "comma in it",
                line=line,
                field="sentence",
            )
        cells = dict(zip(UNNAMED, (c.strip() for c in row[offset:]), strict=True))
        if offset:
            cells["index"] = row[0].strip()
        label = _label(file, line, cells["label"], f" (column '{UNNAMED.index('label')}')")
        out.append(Row(line, cells["sentence"], label, cells))
    return out


def _looks_like_record(cells: list[str]) -> bool:
    """A CSV record, not a sentence: a row index before other cells, or a 0/1 label last."""
    cells = [c.strip() for c in cells]
    if len(cells) < 2:
        return False
    return cells[-1] in ("0", "1") or (len(cells) >= 3 and cells[0].isdigit())


def _sentence_rows(file: Path, text: str) -> list[Row]:
    out: list[Row] = []
    # Lines end as the csv module ends them (LF, CRLF or a lone CR), so line numbers agree
    # with the other layouts' and no line keeps a line break the csv module refuses.
    for number, raw in enumerate(_LINE_END.split(text), start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            cells = next(csv_reader([line]))
        except csv.Error as exc:
            raise InputError(
                file, f"malformed line ({exc})", line=number, field="sentence"
            ) from None
        if _looks_like_record(cells):
            raise InputError(
                file,
                "a CSV record (a row index or a 0/1 label column), not a sentence: the file "
                "has no header; give it `,0,1,2,3` (the released layout) or name its columns "
                "(`sentence,label`)",
                line=number,
                field="sentence",
            )
        if len(line) > 1 and line[0] == line[-1] == '"':  # written by a CSV writer
            line = cells[0].strip() if len(cells) == 1 else line
        out.append(Row(number, line))
    return out


def climp_rows(file: Path, text: str) -> tuple[str, list[Row]]:
    """The file's layout and its sentences, in file order."""
    rows = _csv_rows(file, text)
    if not rows:
        raise InputError(file, "file is empty", line=1)
    layout = _layout(rows[0][1])
    if layout == "named":
        return layout, _named_rows(file, rows)
    if layout == "unnamed":
        return layout, _unnamed_rows(file, rows)
    return layout, _sentence_rows(file, text)


def _pairs(file: Path, rows: list[Row]) -> list[tuple[Row, str, str]]:
    """(first row, grammatical, ungrammatical) of each pair of consecutive rows."""
    if not rows:
        raise InputError(file, "no sentences below the header", line=2, field="sentence")
    if len(rows) % 2:
        raise InputError(
            file,
            f"an odd number of sentences ({len(rows)}): a pair is two consecutive rows",
            line=rows[-1].line,
            field="sentence",
        )
    pairs = []
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        for row in (first, second):
            if not row.sentence:
                raise InputError(file, "empty sentence", line=row.line, field="sentence")
        if first.label is None:
            pairs.append((first, first.sentence, second.sentence))
        elif {first.label, second.label} == {0, 1}:
            good, bad = (first, second) if first.label == 1 else (second, first)
            pairs.append((first, good.sentence, bad.sentence))
        else:
            raise InputError(
                file,
                f"a pair needs one row labelled 1 and one labelled 0 (with line {first.line})",
                line=second.line,
                field="label",
            )
    return pairs


def _base_name(file: Path) -> str:
    return re.sub(r"_\d+$", "", file.stem) or file.stem


@dataclass
class _Read:
    items: list[Item] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    files: list[dict[str, object]] = field(default_factory=list)


def _read_file(file: Path, name: str, read: _Read) -> None:
    layout, rows = climp_rows(file, read_utf8(file))
    pairs = _pairs(file, rows)
    for first, good, bad in pairs:
        cells = first.cells
        phenomenon = cells.get("phenomenon") or _base_name(file)
        item_id = f"CLIMP/{file.stem}/{first.line}"
        meta = {
            "phenomenon": phenomenon,
            "paradigm": cells.get("paradigm") or phenomenon,
            "source_file": file.name,
            "index": cells.get("index"),
        }
        read.items.append(pair_item("CLIMP", item_id, good, bad, meta))
        read.lines[item_id] = first.line
    read.files.append({"file": name, "layout": LAYOUTS[layout], "pairs": len(pairs)})


@dataset_format("climp")
def read_climp(path: Path) -> Dataset:
    """A CLiMP paradigm file, or a folder of them (sub-folders too, as the zip unpacks)."""
    files = files_in(path, ".csv")
    read = _Read()
    for file in files:
        _read_file(file, shown_name(path, file), read)
    return dataset_of(path, files, read.items, "climp", read.lines, climp_files=read.files)
