"""The released CPG-EVAL question banks (`--format cpg-eval`).

The public files are CSV (UTF-8 with BOM) with columns `id,question`, one file per bank, the
bank given by the file name (`1-1-SINGLE-T.csv` … `5-2-CON-INS-T5F5.csv`), and a lite file with
an extra `QuestionBank` column (`CPG-Eval_lite.csv`, the release's only source of BATCH-F and
CAT-GRA). A folder is read whole: every bank file, then every lite file; a CSV that is neither
is listed as skipped. The release's checkout (the folder holding `question_bank/`, whose own
CSVs are the authors' results, not questions) is read from its `question_bank/`, found up to
two levels down as an archive unpacks it (`CPG-EVAL-main/question_bank/`). The whole prompt
is in `question`; it is sent as it is.

Golds that follow from the bank are filled in (SINGLE-T: T, BATCH-F: nine F, …); SIM-GRA,
CAT-GRA and CON-INS-T5F5 carry none, and get the golds the other banks read with them
determine (`golds.py`), each derivation counted in `info["golds"]`; an answer file
(`--answers`) gives or replaces any. What scoring needs is read off the question: the
sub-question count of BATCH and CON-INS, the options of SIM-GRA and CAT-GRA, and the grammar
point's category for the breakdowns. An item's grammar point (`meta.point`, the id a profile
joins items by) is the label its question names (`语法点[能愿动词：会]`); SIM-GRA and CAT-GRA
name none, and take the label of their gold option where the release determines the gold.
Points that share a label (two 语气助词：吧 in the release) are one point.

Ids are the bank and the released id (`SIM-GRA/12`). A lite row that repeats a bank file's row
(the lite file samples the banks) is counted in the file's `in_bank_files`; a row that repeats
an earlier row of its own kind with the same question (the released lite file has such rows)
is asked once and listed in the eval manifest's `dataset.duplicates` and the report; the same
id with a different question is an error naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api import (
    Dataset,
    InputError,
    Item,
    PromptParts,
    RepeatedIds,
    csv_reader,
    csv_rows,
    dataset_format,
    read_utf8,
)
from .golds import derive_golds
from .release_parse import CODE_OPTION, LETTER_OPTION

BANKS = (
    "SINGLE-T",
    "SINGLE-F",
    "BATCH-T",
    "BATCH-F",
    "SIM-GRA",
    "CAT-GRA",
    "CON-INS-F10",
    "CON-INS-T5F5",
)
_BANK_IN_NAME = re.compile("|".join(sorted(map(re.escape, BANKS), key=len, reverse=True)))
_POINT = re.compile(r"语法点\s*[\[【]([^\]】]+)[\]】]")
_COUNT = re.compile(r"1\.?\s*号?到\s*(\d+)\.?\s*号")
_NUMBERED = re.compile(r"^\s*(\d{1,2})[.．、]\s*\S", re.MULTILINE)
_GOLD_LETTER = {
    "SINGLE-T": "T",
    "SINGLE-F": "F",
    "BATCH-T": "T",
    "BATCH-F": "F",
    "CON-INS-F10": "F",
}


def bank_of(path: Path) -> str | None:
    """The bank a released file holds, from its name."""
    match = _BANK_IN_NAME.search(path.name.upper())
    return match.group(0) if match else None


def parse_question(bank: str, question: str) -> dict[str, Any]:
    """What scoring and reporting need, read off a released question."""
    meta: dict[str, Any] = {}
    point = _POINT.search(question)
    if point:
        label = point.group(1).strip()
        meta["point_label"] = label
        meta["point"] = label
        meta["category"] = re.split(r"[：:]", label, maxsplit=1)[0].strip()
    if bank.startswith(("BATCH", "CON-INS")):
        count = _COUNT.search(question)
        meta["n"] = int(count.group(1)) if count else len(_NUMBERED.findall(question))
    elif bank == "SIM-GRA":
        meta["options"] = [{"key": k, "text": t} for k, t in LETTER_OPTION.findall(question)]
    elif bank == "CAT-GRA":
        options = [{"key": k, "text": t} for k, t in CODE_OPTION.findall(question)]
        meta["options"] = options
        if options and "category" not in meta:
            meta["category"] = re.split(r"[：:]", options[0]["text"], maxsplit=1)[0].strip()
    return meta


def gold_for(bank: str, meta: dict[str, Any]) -> str | None:
    """The gold answer the bank implies, if it implies one."""
    letter = _GOLD_LETTER.get(bank)
    if letter is None:
        return None
    return letter * meta["n"] if bank.startswith(("BATCH", "CON-INS")) else letter


def _rows(path: Path, bank: str | None) -> list[Item]:
    text = read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty", line=1)
    needs = ("id", "question") if bank else ("id", "question", "QuestionBank")
    items = []
    for line, row in csv_rows(path, text, needs):
        row_bank = bank or row.get("QuestionBank", "").strip()
        task = bank_of(Path(f"{row_bank}.csv")) if row_bank else None
        if task is None:
            raise InputError(path, f"unknown bank '{row_bank}'", line=line, field="QuestionBank")
        source_id = row["id"].strip()
        question = row["question"]
        if not source_id or not question.strip():
            raise InputError(
                path, "empty id or question", line=line, field="id" if not source_id else "question"
            )
        meta = {
            "source_file": path.name,
            "source_id": source_id,
            "line": line,
            **parse_question(task, question),
        }
        if task in ("SIM-GRA", "CAT-GRA") and not meta.get("options"):
            raise InputError(
                path, f"no options found in this {task} question", line=line, field="question"
            )
        items.append(
            Item(
                id=f"{task}/{source_id}",
                task=task,
                prompt=PromptParts(template="raw.md", vars={"text": question}),
                answer=gold_for(task, meta),
                meta=meta,
            )
        )
    return items


def _gold_source(item: Item) -> str:
    if item.task in _GOLD_LETTER:
        return "bank"
    return "derived" if item.answer is not None else "none"


def file_kind(path: Path) -> str | None:
    """`bank` (the name names a bank), `lite` (a `QuestionBank` column) or None."""
    if bank_of(path):
        return "bank"
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        header = next(csv_reader([handle.readline()]), [])
    return "lite" if "QuestionBank" in [c.strip() for c in header] else None


QUESTION_BANK = "question_bank"
"""The release's folder of question files, inside its checkout."""
SKIPPED = ("__MACOSX",)
"""Folders an archive leaves beside the data, never searched."""


def question_bank(path: Path) -> Path:
    """The folder whose files to read: `path`, or the `question_bank/` of a checkout.

    A folder with bank files of its own is read as it is. Otherwise its `question_bank/` is
    looked for, in it or one folder down (an unpacked archive's `CPG-EVAL-main/`); two of them
    are an error naming both.
    """
    if any(bank_of(f) for f in path.glob("*.csv")):
        return path
    found = [
        folder
        for pattern in (QUESTION_BANK, f"*/{QUESTION_BANK}")
        for folder in sorted(path.glob(pattern))
        if folder.is_dir()
        and not any(p.startswith(".") or p in SKIPPED for p in folder.relative_to(path).parts)
    ]
    if len(found) > 1:
        raise InputError(
            path, f"two {QUESTION_BANK}/ folders in this checkout: {found[0]} and {found[1]}"
        )
    return found[0] if found else path


def _files(path: Path) -> tuple[list[Path], list[str]]:
    """The files to read (bank files, then lite files) and the CSVs skipped."""
    if path.is_file():
        return [path], []
    if not path.is_dir():
        raise InputError(path, "file not found")
    folder = question_bank(path)
    found = sorted(folder.glob("*.csv"))
    kinds = {f: file_kind(f) for f in found}
    files = [f for f in found if kinds[f] == "bank"] + [f for f in found if kinds[f] == "lite"]
    if not files:
        raise InputError(
            path,
            "no CPG-EVAL bank files (*.csv with a bank in the name, or a lite file with a "
            f"QuestionBank column) in this folder, nor a {QUESTION_BANK}/ folder holding them",
        )
    return files, [str(f.relative_to(path)) for f in found if kinds[f] is None]


@dataclass
class _Reading:
    """What reading the files has gathered so far."""

    items: list[Item] = field(default_factory=list)
    repeated: RepeatedIds = field(default_factory=RepeatedIds)
    from_banks: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Item id -> (question, file) of every row read from a bank file."""

    def add(self, file: Path, kind: str) -> dict[str, Any]:
        rows = _rows(file, bank_of(file) if kind == "bank" else None)
        counts: Counter[str] = Counter()
        for item in rows:
            question = item.prompt.vars["text"]
            seen = self.from_banks.get(item.id) if kind == "lite" else None
            if seen is not None:
                if seen[0] != question:
                    raise InputError(
                        file,
                        f"id '{item.meta['source_id']}' has another question in {seen[1]}",
                        line=item.meta["line"],
                        field="question",
                    )
                counts["in_bank_files"] += 1
                continue
            if not self.repeated.admit(item.id, question, file, item.meta["line"], "question"):
                counts["repeats"] += 1
                continue
            if kind == "bank":
                self.from_banks[item.id] = (question, file.name)
            self.items.append(item)
            counts[item.task] += 1
        banks = {b: n for b, n in counts.items() if b in BANKS}
        return {
            "file": file.name,
            "kind": kind,
            "rows": len(rows),
            "items": sum(banks.values()),
            "banks": banks,
            "in_bank_files": counts["in_bank_files"],
            "repeats": counts["repeats"],
        }


def _with_gold_point(item: Item) -> Item:
    """A SIM-GRA or CAT-GRA item with its gold option's label as its grammar point."""
    if item.task not in ("SIM-GRA", "CAT-GRA") or item.answer is None:
        return item
    label = next((o["text"] for o in item.meta["options"] if o["key"] == item.answer), None)
    if not label:
        return item
    return item.model_copy(update={"meta": {**item.meta, "point": label.strip()}})


@dataset_format("cpg-eval")
def read_released(path: Path) -> Dataset:
    """A released folder read whole, one bank file, or the lite file."""
    files, skipped = _files(path)
    digest = hashlib.sha256()
    reading = _Reading()
    described = []
    for file in files:
        digest.update(file.read_bytes())
        described.append(reading.add(file, file_kind(file) or "bank"))
    golds = derive_golds(reading.items)
    reading.items = [_with_gold_point(item) for item in reading.items]
    for entry in described:
        of_file = (i for i in reading.items if i.meta["source_file"] == entry["file"])
        entry["golds"] = dict(Counter(_gold_source(i) for i in of_file))
    items = reading.items
    return Dataset(
        path=path,
        items=items,
        digest=digest.hexdigest(),
        info={"format": "cpg-eval", "files": described, "skipped": skipped, "golds": golds},
        lines={i.id: i.meta["line"] for i in items},
        duplicates=reading.repeated.dropped,
    )
