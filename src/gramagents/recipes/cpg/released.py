"""The released CPG-EVAL question banks (`--format cpg-eval`).

The public files are CSV (UTF-8 with BOM) with columns `id,question`, one file per bank, the
bank given by the file name (`1-1-SINGLE-T.csv` … `5-2-CON-INS-T5F5.csv`), and a lite file with
an extra `QuestionBank` column. The whole prompt is in `question`; it is sent as it is.
Golds that follow from the bank are filled in (SINGLE-T: T, BATCH-F: nine F, …); SIM-GRA,
CAT-GRA and CON-INS-T5F5 carry none, and take them from an answer file (`--answers`). What
scoring needs is read off the question: the sub-question count of BATCH and CON-INS, the
options of SIM-GRA and CAT-GRA, and the grammar point's category for the breakdowns.

Ids are the bank and the released id (`SIM-GRA/12`). A row that repeats an earlier row's id
with the same question (the released lite file has such rows) is asked once and listed in the
eval manifest's `dataset.duplicates` and the report; the same id with a different question is
an error naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...records import Item, PromptParts
from ...sources import _text
from ...sources.datasets import Dataset, dataset_format
from ...sources.duplicates import RepeatedIds

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
_LETTER_OPTION = re.compile(r"^\s*([A-Z])[.．、]\s*(.+?)\s*$", re.MULTILINE)
_CODE_OPTION = re.compile(r"^\s*(\d{4})[.．、]\s*(.+?)\s*$", re.MULTILINE)
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
        meta["category"] = re.split(r"[：:]", label, maxsplit=1)[0].strip()
    if bank.startswith(("BATCH", "CON-INS")):
        count = _COUNT.search(question)
        meta["n"] = int(count.group(1)) if count else len(_NUMBERED.findall(question))
    elif bank == "SIM-GRA":
        meta["options"] = [{"key": k, "text": t} for k, t in _LETTER_OPTION.findall(question)]
    elif bank == "CAT-GRA":
        options = [{"key": k, "text": t} for k, t in _CODE_OPTION.findall(question)]
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
    text = _text.read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty", line=1)
    needs = ("id", "question") if bank else ("id", "question", "QuestionBank")
    items = []
    for line, row in _text.iter_csv(path, text, needs):
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


@dataset_format("cpg-eval")
def read_released(path: Path) -> Dataset:
    """A folder of released bank files, one bank file, or the lite file."""
    if path.is_dir():
        files = sorted(p for p in path.glob("*.csv") if bank_of(p))
        if not files:
            files = sorted(path.glob("*.csv"))
        if not files:
            raise InputError(path, "no CPG-EVAL bank files (*.csv) in this folder")
    elif path.is_file():
        files = [path]
    else:
        raise InputError(path, "file not found")
    items: list[Item] = []
    digest = hashlib.sha256()
    repeated = RepeatedIds()
    for file in files:
        digest.update(file.read_bytes())
        for item in _rows(file, bank_of(file)):
            question = item.prompt.vars["text"]
            if repeated.admit(item.id, question, file, item.meta["line"], field="question"):
                items.append(item)  # an identical repeat (the lite file has some) is asked once
    return Dataset(
        path=path,
        items=items,
        digest=digest.hexdigest(),
        info={"format": "cpg-eval", "files": [f.name for f in files]},
        lines={i.id: i.meta["line"] for i in items},
        duplicates=repeated.dropped,
    )
