"""BLiMP (`--format blimp`), and what the minimal-pair readers share (CLiMP: climp.py).

BLiMP: JSONL, one file per paradigm, lines with `sentence_good`, `sentence_bad` and (as the
released files have them) `field`, `linguistics_term`, `UID`, `pairID`. A folder is read with
its sub-folders, as archives unpack (`files_in`); the manifest lists every file read.

A BLiMP pair is `BLIMP/<UID>/<pairID>`: a line repeating an earlier pair's id with the same
two sentences is scored once and listed in the manifest's `dataset.duplicates`; with other
sentences it is an error naming the file, the line and `pairID`. A CLiMP pair is named by its
file and line (`CLIMP/<file>/<line>`), so its ids cannot repeat.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...api import (
    Dataset,
    InputError,
    Item,
    PromptParts,
    RepeatedIds,
    dataset_format,
    jsonl_rows,
    read_utf8,
)

SKIPPED = ("__MACOSX",)
"""Folders an archive leaves beside the data (macOS resource forks), never read."""


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") or part in SKIPPED for part in parts)


def files_in(path: Path, suffix: str) -> list[Path]:
    """The files with this suffix in a folder and its sub-folders, or the one file given.

    A folder is read as an archive unpacks it: the files may be a level down (CLiMP's zip
    gives `CLiMP_corpus/` beside `__MACOSX/`, BLiMP's `data/`); `__MACOSX` and dot files and
    folders are skipped. Files are in path order; two with the same name in different
    folders are an error (an item's id names its file).
    """
    if path.is_dir():
        files = sorted(
            f
            for f in path.rglob(f"*{suffix}")
            if f.is_file() and not _hidden(f.relative_to(path).parts)
        )
        if not files:
            raise InputError(path, f"no {suffix} files in this folder or its sub-folders")
        seen: dict[str, Path] = {}
        for file in files:
            if file.stem in seen:
                raise InputError(
                    file, f"a second file named {file.name} (the first: {seen[file.stem]})"
                )
            seen[file.stem] = file
        return files
    if not path.is_file():
        raise InputError(path, "file not found")
    return [path]


def shown_name(path: Path, file: Path) -> str:
    """A file's name as the manifest and report list it: its path below the folder given."""
    return str(file.relative_to(path)) if path.is_dir() else file.name


def pair_item(task: str, item_id: str, good: str, bad: str, meta: dict[str, Any]) -> Item:
    """A minimal pair as an item: the grammatical sentence is the answer."""
    return Item(
        id=item_id,
        task=task,
        prompt=PromptParts(template="raw.md", vars={"good": good, "bad": bad}),
        answer="good",
        meta=meta,
    )


def dataset_of(
    path: Path,
    files: list[Path],
    items: list[Item],
    fmt: str,
    lines: dict[str, int],
    **info: Any,
) -> Dataset:
    """The dataset of pairs read from `files` (its digest: every file's bytes)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return Dataset(
        path=path,
        items=items,
        digest=digest.hexdigest(),
        info={"format": fmt, "files": [shown_name(path, f) for f in files], **info},
        lines=lines,
    )


@dataset_format("blimp")
def read_blimp(path: Path) -> Dataset:
    """A BLiMP paradigm file, or a folder of them."""
    files = files_in(path, ".jsonl")
    items: list[Item] = []
    lines: dict[str, int] = {}
    read: list[dict[str, Any]] = []
    repeated = RepeatedIds("pair")
    for file in files:
        text = read_utf8(file)
        if not text.strip():
            raise InputError(file, "file is empty", line=1)
        before = len(items)
        for line, row in jsonl_rows(file, text):
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
                pair_item(
                    "BLIMP",
                    item_id,
                    row["sentence_good"].strip(),
                    row["sentence_bad"].strip(),
                    meta,
                )
            )
            lines[item_id] = line
        read.append({"file": shown_name(path, file), "pairs": len(items) - before})
    dataset = dataset_of(path, files, items, "blimp", lines, pair_files=read)
    dataset.duplicates = repeated.dropped
    return dataset
