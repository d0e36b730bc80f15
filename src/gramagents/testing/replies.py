"""Reply corpora: replies to real prompts, each with the reading a careful grader gives it.

A corpus is a JSONL file, one reply a line:

    {"id": "cpg-single-zh-01", "chain": "tf", "prompt": [{"role": "user", "content": "…"}],
     "meta": {"n": 9}, "reply": "Ｔ", "expected": {"value": "T"}, "note": "full-width"}

- `chain`: the extraction chain the task uses (`tf`, `tf-sequence`, `letter`, `code`, ...);
- `prompt`: the prompt that was sent, a string or its chat messages;
- `meta`: what the chain reads of the item (the options, the number of sub-questions, the
  sentence of a phrase question, the student's text of a correction);
- `expected`: `{"value": …}` for an answer, `{"value": null, "reason": "echo"}` for a reply
  that holds none (`echo`, `refusal`, `hedge`, `conflict` or `no-answer`).

`tests/test_reply_corpus.py` reads every `tests/data/replies*.jsonl`, so a corpus of one's own
replies is checked by putting it beside the project's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..scoring.extract import REASONS, Extraction, extract, known_chains

REQUIRED = ("id", "chain", "prompt", "reply", "expected")


@dataclass(frozen=True)
class Reading:
    """One corpus entry against what its chain reads."""

    entry: dict[str, Any]
    found: Extraction

    @property
    def expected(self) -> tuple[Any, str | None]:
        """The grader's reading: the value, and why there is none."""
        wanted = self.entry["expected"]
        return wanted.get("value"), wanted.get("reason")

    @property
    def right(self) -> bool:
        """Whether the chain reads the reply as the grader does."""
        return (self.found.value, self.found.reason) == self.expected


def read_corpus(path: Path) -> list[dict[str, Any]]:
    """The entries of a corpus file; a malformed line is an error naming its line and field."""
    chains = set(known_chains())
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON ({exc.msg})", line=number) from None
        if not isinstance(entry, dict):
            raise InputError(path, "a line must be a JSON object", line=number)
        for field in REQUIRED:
            if field not in entry:
                raise InputError(path, "missing", line=number, field=field)
        if entry["chain"] not in chains:
            raise InputError(path, f"no chain '{entry['chain']}'", line=number, field="chain")
        reason = (entry["expected"] or {}).get("reason")
        if reason is not None and reason not in REASONS:
            raise InputError(
                path, f"'{reason}' is none of {', '.join(REASONS)}", line=number, field="expected"
            )
        entries.append(entry)
    return entries


def read_entry(entry: dict[str, Any]) -> Reading:
    """What the entry's chain reads of its reply, given its prompt."""
    found = extract(entry["chain"], entry["reply"], entry.get("meta") or {}, entry["prompt"])
    return Reading(entry, found)
