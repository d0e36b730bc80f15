"""Published minimal-pair sets: BLiMP (`--format blimp`) and CLiMP (`--format climp`).

BLiMP: JSONL, one file per paradigm, lines with `sentence_good`, `sentence_bad` and (as the
released files have them) `field`, `linguistics_term`, `UID`, `pairID`.

CLiMP: CSV, one file per phenomenon, rows `index, phenomenon, paradigm, sentence, label`
(label 1 grammatical, 0 not) on consecutive rows per pair; a file without a header holds only
sentences, grammatical and ungrammatical alternating. Extra columns (an unnamed row index)
are ignored.

A BLiMP pair is `BLIMP/<UID>/<pairID>`: a line repeating an earlier pair's id with the same
two sentences is scored once and listed in the manifest's `dataset.duplicates`; with other
sentences it is an error naming the file, the line and `pairID`. A CLiMP pair is named by its
file and line (`CLIMP/<file>/<line>`), so its ids cannot repeat.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...records import Item, PromptParts
from ...sources import _text
from ...sources.datasets import Dataset, dataset_format
from ...sources.duplicates import RepeatedIds


def _files(path: Path, suffix: str) -> list[Path]:
    if path.is_dir():
        files = sorted(path.glob(f"*{suffix}"))
        if not files:
            raise InputError(path, f"no {suffix} files in this folder")
        return files
    if not path.is_file():
        raise InputError(path, "file not found")
    return [path]


def _pair_item(task: str, item_id: str, good: str, bad: str, meta: dict[str, Any]) -> Item:
    return Item(
        id=item_id,
        task=task,
        prompt=PromptParts(template="raw.md", vars={"good": good, "bad": bad}),
        answer="good",
        meta=meta,
    )


def _dataset(
    path: Path, files: list[Path], items: list[Item], fmt: str, lines: dict[str, int]
) -> Dataset:
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return Dataset(
        path=path,
        items=items,
        digest=digest.hexdigest(),
        info={"format": fmt, "files": [f.name for f in files]},
        lines=lines,
    )


@dataset_format("blimp")
def read_blimp(path: Path) -> Dataset:
    """A BLiMP paradigm file, or a folder of them."""
    files = _files(path, ".jsonl")
    items: list[Item] = []
    lines: dict[str, int] = {}
    repeated = RepeatedIds("pair")
    for file in files:
        text = _text.read_utf8(file)
        if not text.strip():
            raise InputError(file, "file is empty", line=1)
        for line, row in _text.iter_jsonl(file, text):
            for field in ("sentence_good", "sentence_bad"):
                if not isinstance(row.get(field), str) or not row[field].strip():
                    raise InputError(file, "missing or empty", line=line, field=field)
            uid = str(row.get("UID") or file.stem)
            item_id = f"BLIMP/{uid}/{row.get('pairID', line)}"
            pair = (row["sentence_good"].strip(), row["sentence_bad"].strip())
            if not repeated.admit(item_id, pair, file, line, field="pairID"):
                continue  # the same pair twice: scored once, listed in the manifest
            meta = {
                "UID": uid,
                "linguistics_term": row.get("linguistics_term") or uid,
                "field": row.get("field") or "",
                "pairID": row.get("pairID"),
                "source_file": file.name,
            }
            items.append(
                _pair_item(
                    "BLIMP",
                    item_id,
                    row["sentence_good"].strip(),
                    row["sentence_bad"].strip(),
                    meta,
                )
            )
            lines[item_id] = line
    dataset = _dataset(path, files, items, "blimp", lines)
    dataset.duplicates = repeated.dropped
    return dataset


def _climp_rows(file: Path, text: str) -> list[tuple[int, str, int | None, dict[str, str]]]:
    """(line, sentence, label or None, extra columns) for every row of a CLiMP file."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = [(reader.line_num, row) for row in reader if any(c.strip() for c in row)]
    if not rows:
        raise InputError(file, "file is empty", line=1)
    header = [c.strip() for c in rows[0][1]]
    if "sentence" not in header:  # no header: sentences alternating good and bad
        return [(line, row[-1].strip(), None, {}) for line, row in rows]
    if "label" not in header:
        raise InputError(file, "missing column label", line=1)
    out: list[tuple[int, str, int | None, dict[str, str]]] = []
    for line, row in rows[1:]:
        cells = dict(zip(header, (c.strip() for c in row), strict=False))
        label = cells.get("label", "")
        if label not in ("0", "1"):
            raise InputError(
                file, f"must be 1 (grammatical) or 0, not '{label}'", line=line, field="label"
            )
        out.append((line, cells.get("sentence", ""), int(label), cells))
    return out


@dataset_format("climp")
def read_climp(path: Path) -> Dataset:
    """A CLiMP phenomenon file, or a folder of them."""
    files = _files(path, ".csv")
    items: list[Item] = []
    lines: dict[str, int] = {}
    for file in files:
        rows = _climp_rows(file, _text.read_utf8(file))
        if len(rows) % 2:
            raise InputError(
                file, "an odd number of sentences: pairs are consecutive rows", line=rows[-1][0]
            )
        for first, second in zip(rows[::2], rows[1::2], strict=True):
            line = first[0]
            if first[2] is None:
                good, bad = first[1], second[1]
            elif {first[2], second[2]} == {0, 1}:
                good, bad = (first[1], second[1]) if first[2] == 1 else (second[1], first[1])
            else:
                raise InputError(
                    file,
                    "a pair needs one row labelled 1 and one labelled 0",
                    line=second[0],
                    field="label",
                )
            if not good or not bad:
                raise InputError(file, "empty sentence", line=line, field="sentence")
            cells = first[3]
            phenomenon = cells.get("phenomenon") or file.stem
            paradigm = cells.get("paradigm") or phenomenon
            item_id = f"CLIMP/{file.stem}/{line}"
            items.append(
                _pair_item(
                    "CLIMP",
                    item_id,
                    good,
                    bad,
                    {
                        "phenomenon": phenomenon,
                        "paradigm": paradigm,
                        "source_file": file.name,
                        "index": cells.get("index"),
                    },
                )
            )
            lines[item_id] = line
    return _dataset(path, files, items, "climp", lines)
