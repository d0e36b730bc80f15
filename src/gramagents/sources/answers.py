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
from ..report.mdtext import code_span
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


class AnswerFile:
    """The gold answers of a file, given to items one at a time as a dataset streams by."""

    def __init__(self, path: Path) -> None:
        self.path = path
        text = _text.read_utf8(path)
        if not text.strip():
            raise InputError(path, "file is empty", line=1)
        rows = (
            _text.iter_jsonl(path, text)
            if path.suffix == ".jsonl"
            else _text.iter_csv(path, text, ("id", "answer"))
        )
        repeated = RepeatedIds("answer id")
        self.answers: dict[str, tuple[str, int]] = {}
        """Id to the answer and the line it is on."""
        for line, row in rows:
            key = str(row.get("id", "")).strip()
            answer = str(row.get("answer", "")).strip()
            if not key:
                raise InputError(path, "missing", line=line, field="id")
            if repeated.admit(key, answer, path, line, field="answer"):
                self.answers[key] = (answer, line)
        self.dropped = repeated.dropped
        """Rows dropped as identical repeats of an earlier id."""
        self._used: set[str] = set()
        self._filled = 0
        self._example: str | None = None

    def apply(self, item: Item) -> Item:
        """`item` with its answer from the file (by its id, or the id its source gave it)."""
        if self._example is None:
            self._example = item.id
        source = item.meta.get("source_id")
        keys = [item.id] if source is None or str(source) == item.id else [item.id, str(source)]
        filled = False
        for key in keys:
            found = self.answers.get(key)
            if found is None:
                continue
            answer, line = found
            problem = _problem(item, answer)
            if problem:
                raise InputError(
                    self.path, f"{problem} for {item.task} item '{key}'", line=line, field="answer"
                )
            self._used.add(key)
            item = item.model_copy(update={"answer": answer})
            filled = True
        self._filled += filled
        return item

    def finish(self, dataset: Dataset) -> None:
        """After the last item: record what was used in `dataset.info["answers"]`.

        A file none of whose rows names an item is refused.
        """
        unused = [(line, key) for key, (_, line) in self.answers.items() if key not in self._used]
        if not self._used:
            named = f" such as '{self._example}'" if self._example is not None else ""
            first = min((line for _, line in self.answers.values()), default=1)
            raise InputError(
                self.path,
                f"no row names an item of the dataset (ids are item ids{named}, or the ids the "
                "published file gave them)",
                line=first,
                field="id",
            )
        dataset.info["answers"] = {
            "file": str(self.path),
            "used": len(self._used),
            "unused": len(unused),
            "unused_ids": [key for _, key in sorted(unused)[:20]],
            "items": self._filled,
        }


def apply_answer_file(dataset: Dataset, path: Path) -> None:
    """Fill in gold answers of a dataset read whole from `path`; record what was used.

    Identical repeated rows go to `dataset.duplicates`.
    """
    answers = AnswerFile(path)
    dataset.items[:] = [answers.apply(item) for item in dataset.items]
    answers.finish(dataset)
    dataset.duplicates += answers.dropped


def describe_answers(recorded: dict[str, Any] | None) -> list[str]:
    """Report lines for a manifest's `dataset.answers` (none when no answer file was given)."""
    if not recorded:
        return []
    line = (
        f"answers: {code_span(recorded['file'])}, {recorded['used']} rows used "
        f"({recorded['items']} items)"
    )
    if recorded.get("unused"):
        shown = ", ".join(code_span(i) for i in recorded.get("unused_ids", []))
        more = " …" if recorded["unused"] > len(recorded.get("unused_ids", [])) else ""
        line += f", {recorded['unused']} rows name no item of this dataset (ids: {shown}{more})"
    return [line]
