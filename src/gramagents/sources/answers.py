"""Answer files: gold answers for items whose dataset carries none (`gramagents eval --answers`).

CSV with columns `id,answer`, or JSONL objects with those keys. `id` is an item's id or the id
the published file gave it (`meta.source_id`). Each answer is checked against its task: T or
F, a T/F string as long as the question's sub-questions, or one of the question's options.
An id given twice with the same answer is read once and listed; with two different answers it
is an error naming the file, the line and the field.

The file may cover more than the dataset (one answer file for a whole release, used on one of
its bank files): rows whose id names no item are counted as unused, and the eval manifest's
`dataset.answers` and the report say how many rows were used and how many not. A file none of
whose rows names an item is refused.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records import Item
from ..tasks import get_task
from . import _text
from .datasets import Dataset
from .duplicates import RepeatedIds


def _problem(item: Item, answer: str) -> str | None:
    spec = get_task(item.task)
    extractor = spec.extractor if spec else ""
    meta: dict[str, Any] = {**item.prompt.vars, **item.meta}
    if extractor == "tf" and answer not in ("T", "F"):
        return "must be T or F"
    if extractor == "tf-sequence":
        size = meta.get("n")
        if not re.fullmatch(r"[TF]+", answer) or (isinstance(size, int) and len(answer) != size):
            return f"must be {size} letters T or F" if size else "must be letters T or F"
    if extractor in ("letter", "code"):
        keys = [str(o["key"]) for o in meta.get("options") or []]
        if answer not in keys:
            return f"must be one of the options ({', '.join(keys)})"
    return None


def _index(items: list[Item]) -> dict[str, list[int]]:
    """Item id, and the id the published file gave it, to the item's positions."""
    index: dict[str, list[int]] = {}
    for position, item in enumerate(items):
        index.setdefault(item.id, []).append(position)
        source = item.meta.get("source_id")
        if source is not None and str(source) != item.id:
            index.setdefault(str(source), []).append(position)
    return index


def apply_answer_file(dataset: Dataset, path: Path) -> None:
    """Fill in gold answers from `path`, and record in `dataset.info["answers"]` what was used.

    Identical repeated rows go to `dataset.duplicates`.
    """
    text = _text.read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty", line=1)
    rows = (
        list(_text.iter_jsonl(path, text))
        if path.suffix == ".jsonl"
        else list(_text.iter_csv(path, text, ("id", "answer")))
    )
    items = dataset.items
    index = _index(items)
    repeated = RepeatedIds("answer id")
    unused: list[str] = []
    filled: set[int] = set()
    for line, row in rows:
        key = str(row.get("id", "")).strip()
        answer = str(row.get("answer", "")).strip()
        if not key:
            raise InputError(path, "missing", line=line, field="id")
        if not repeated.admit(key, answer, path, line, field="answer"):
            continue
        if key not in index:
            unused.append(key)
            continue
        for position in index[key]:
            item = items[position]
            problem = _problem(item, answer)
            if problem:
                raise InputError(
                    path, f"{problem} for {item.task} item '{key}'", line=line, field="answer"
                )
            items[position] = item.model_copy(update={"answer": answer})
            filled.add(position)
    used = len(rows) - len(repeated.dropped) - len(unused)
    if not used:
        named = f" such as '{items[0].id}'" if items else ""
        raise InputError(
            path,
            f"no row names an item of the dataset (ids are item ids{named}, or the ids the "
            "published file gave them)",
            line=rows[0][0] if rows else 1,
            field="id",
        )
    dataset.duplicates += repeated.dropped
    dataset.info["answers"] = {
        "file": str(path),
        "used": used,
        "unused": len(unused),
        "unused_ids": unused[:20],
        "items": len(filled),
    }


def describe_answers(recorded: dict[str, Any] | None) -> list[str]:
    """Report lines for a manifest's `dataset.answers` (none when no answer file was given)."""
    if not recorded:
        return []
    line = (
        f"answers: `{recorded['file']}`, {recorded['used']} rows used ({recorded['items']} items)"
    )
    if recorded.get("unused"):
        shown = ", ".join(f"`{i}`" for i in recorded.get("unused_ids", []))
        more = " …" if recorded["unused"] > len(recorded.get("unused_ids", [])) else ""
        line += f", {recorded['unused']} rows name no item of this dataset (ids: {shown}{more})"
    return [line]
