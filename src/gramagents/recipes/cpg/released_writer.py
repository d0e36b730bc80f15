"""Write built CPG banks in the released CPG-EVAL file layout (`--format cpg-eval`).

Each bank becomes `<n>-<BANK>.csv` (UTF-8 with BOM, columns `id,question`) with the question
rendered whole, ids numbered across banks as the released files number them; `answers.csv`
holds every gold answer by that id; `lite.csv` holds every item with a `QuestionBank` column.
Tests use it to check the released-format reader against banks whose answers are known.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ...api import Item, load_prompt

FILE_NAMES = {
    "SINGLE-T": "1-1-SINGLE-T",
    "SINGLE-F": "1-2-SINGLE-F",
    "BATCH-T": "2-1-BATCH-T",
    "BATCH-F": "2-2-BATCH-F",
    "SIM-GRA": "3-SIM-GRA",
    "CAT-GRA": "4-CAT-GRA",
    "CON-INS-F10": "5-1-CON-INS-F10",
    "CON-INS-T5F5": "5-2-CON-INS-T5F5",
}


def write_released(items: list[Item], folder: Path, lite: bool = False) -> dict[str, str]:
    """Write the bank files (or one lite file); returns released id -> gold answer."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[tuple[str, str]]] = {}
    answers: dict[str, str] = {}
    number = 0
    for task in FILE_NAMES:
        for item in (i for i in items if i.task == task):
            number += 1
            template = load_prompt(item.prompt.template)
            question = template.render(item.prompt.vars)[-1].content
            rows.setdefault(task, []).append((str(number), question))
            answers[str(number)] = str(item.answer)
    if lite:
        with (folder / "lite.csv").open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "question", "QuestionBank"])
            for task, task_rows in rows.items():
                writer.writerows([(i, q, FILE_NAMES[task]) for i, q in task_rows])
    else:
        for task, task_rows in rows.items():
            with (folder / f"{FILE_NAMES[task]}.csv").open(
                "w", encoding="utf-8-sig", newline=""
            ) as handle:
                writer = csv.writer(handle)
                writer.writerow(["id", "question"])
                writer.writerows(task_rows)
    return answers


def write_answers(answers: dict[str, str], path: Path) -> Path:
    """An answer file (`id,answer`) for `gramagents eval --answers`."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "answer"])
        writer.writerows(answers.items())
    return path
