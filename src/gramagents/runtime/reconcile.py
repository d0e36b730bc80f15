"""What an eval's run folder really holds, made consistent before a resume asks anything.

An item of a model counts as done only when `responses.jsonl` has its response and
`scores.jsonl` its score, once each, and the two agree (same task, same extracted answer).
Everything else is set aside (`Run.set_aside`, with file, line and reason) and the record files
are rewritten without it, so that the resume asks or scores those items again and each item
ends with one response and one score: a partial last line cut off by a kill, a line that is not
a JSON record, a repeat, a response without its score or a score without its response, a pair
that disagrees, and, when the run re-asks what changed, records made under the earlier inputs.

The files are read twice at most (once to decide, once more to rewrite a file that lost lines),
keeping only keys and line numbers, so that a large run is not held in memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .run import Run
from .rundir import iter_jsonl_raw, refuse_link, repair_jsonl, temporary_file

RESPONSES = "responses.jsonl"
SCORES = "scores.jsonl"
FAILURES = "failures.jsonl"
Stale = Callable[[str, str], bool]
"""`stale(model, item_id)`: whether the item's records were made under inputs since changed."""


@dataclass
class Reconciled:
    """The records a resume keeps."""

    done: dict[tuple[str, str], bool] = field(default_factory=dict)
    """(model, item) of every item done, to whether its answer was invalid."""
    set_aside: int = 0
    """Lines set aside by this resume."""


@dataclass
class _Scan:
    """One record file as read: what to keep and what to set aside, by line number."""

    name: str
    lines: int = 0
    bad: dict[int, tuple[str, str]] = field(default_factory=dict)
    """Line number to (reason, text)."""


def _lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any] | None]]:
    """(number, raw line, record or None) for each non-blank line; a record names its answer."""
    for number, raw, record in iter_jsonl_raw(path):
        if record is not None and ("model" not in record or "item_id" not in record):
            record = None
        yield number, raw, record


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\n")


def _answer(record: dict[str, Any]) -> str:
    return json.dumps(record.get("extracted"), sort_keys=True, ensure_ascii=False)


def reconcile(
    run: Run, stale: Stale | None = None, on_score: Callable[[dict[str, Any]], None] | None = None
) -> Reconciled:
    """Make the eval records of `run` consistent (see the module docstring).

    `on_score` sees every score line kept (the resume's summary is built from them).
    """
    tails = {name: repair_jsonl(run.file(name)) for name in (RESPONSES, SCORES, FAILURES)}
    responses, answered = _scan_responses(run.file(RESPONSES), stale)
    scores, done = _scan_scores(run.file(SCORES), answered, stale, on_score)
    for key, (number, _) in answered.items():
        if key not in done:
            responses.bad[number] = ("a response without its score line", "")
    failures = _Scan(FAILURES)
    for number, raw, record in _lines(run.file(FAILURES)):
        failures.lines = number
        if record is None:
            failures.bad[number] = ("not a JSON record", _text(raw))
    entries: list[dict[str, Any]] = []
    for scan in (responses, scores, failures):
        tail = tails[scan.name]
        if tail.strip():
            entries.append(_entry(scan.name, scan.lines + 1, "cut off by a stopped write", tail))
        entries += [
            {"file": scan.name, "line": n, "reason": reason, "text": text}
            for n, (reason, text) in sorted(scan.bad.items())
        ]
    _fill_texts(run.file(RESPONSES), responses)
    set_aside = run.set_aside(entries)  # first: a kill from here on loses nothing
    for scan in (responses, scores, failures):
        if scan.bad:
            _rewrite(run.file(scan.name), set(scan.bad))
    return Reconciled(done=done, set_aside=set_aside)


def _entry(name: str, line: int, reason: str, raw: bytes) -> dict[str, Any]:
    return {"file": name, "line": line, "reason": reason, "text": _text(raw)}


def _scan_responses(
    path: Path, stale: Stale | None
) -> tuple[_Scan, dict[tuple[str, str], tuple[int, str]]]:
    """The response lines: (model, item) to (line, task and answer) for those kept."""
    scan = _Scan(RESPONSES)
    answered: dict[tuple[str, str], tuple[int, str]] = {}
    seen: set[tuple[str, str, int]] = set()
    for number, raw, record in _lines(path):
        scan.lines = number
        if record is None:
            scan.bad[number] = ("not a JSON record", _text(raw))
            continue
        model, item = str(record["model"]), str(record["item_id"])
        key = (model, item, int(record.get("sample") or 0))
        if key in seen:
            scan.bad[number] = ("repeats an earlier response", _text(raw))
        elif stale is not None and stale(model, item):
            scan.bad[number] = ("made under inputs that have changed", _text(raw))
        else:
            seen.add(key)
            if key[2] == 0:
                answered[model, item] = (number, f"{record.get('task')}\0{_answer(record)}")
    return scan, answered


def _scan_scores(
    path: Path,
    answered: dict[tuple[str, str], tuple[int, str]],
    stale: Stale | None,
    on_score: Callable[[dict[str, Any]], None] | None,
) -> tuple[_Scan, dict[tuple[str, str], bool]]:
    """The score lines: the items done (a score that agrees with its response)."""
    scan = _Scan(SCORES)
    done: dict[tuple[str, str], bool] = {}
    for number, raw, record in _lines(path):
        scan.lines = number
        if record is None:
            scan.bad[number] = ("not a JSON record", _text(raw))
            continue
        key = (str(record["model"]), str(record["item_id"]))
        response = answered.get(key)
        reason = None
        if key in done:
            reason = "repeats an earlier score"
        elif stale is not None and stale(*key):
            reason = "made under inputs that have changed"
        elif response is None:
            reason = "a score without its response line"
        elif response[1] != f"{record.get('task')}\0{_answer(record)}":
            reason = "disagrees with its response line (task or extracted answer)"
        if reason is not None:
            scan.bad[number] = (reason, _text(raw))
            continue
        done[key] = bool(record.get("invalid"))
        if on_score is not None:
            on_score(record)
    return scan, done


def _fill_texts(path: Path, scan: _Scan) -> None:
    """The text of response lines set aside for want of a score (read only when needed)."""
    missing = {n for n, (_, text) in scan.bad.items() if not text}
    if not missing:
        return
    for number, raw, _ in _lines(path):
        if number in missing:
            scan.bad[number] = (scan.bad[number][0], _text(raw))


def _rewrite(path: Path, drop: set[int]) -> None:
    """Rewrite a record file without the lines numbered in `drop`, atomically."""
    refuse_link(path)
    fd, tmp = temporary_file(path)
    try:
        with os.fdopen(fd, "wb") as out, path.open("rb") as source:
            for number, raw in enumerate(source, start=1):
                if number not in drop:
                    out.write(raw)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def count_stale(run: Run, stale: Stale) -> int:
    """How many scored (model, item) of the folder `stale` covers.

    A response without its score is asked again whatever changed, so it mixes nothing.
    """
    found: set[tuple[str, str]] = set()
    for _, _, record in _lines(run.file(SCORES)):
        if record is not None and stale(str(record["model"]), str(record["item_id"])):
            found.add((str(record["model"]), str(record["item_id"])))
    return len(found)
