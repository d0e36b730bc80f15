"""A grammar-point table recovered from the released CPG-EVAL banks, to rebuild them from.

- Points and their sentences: SINGLE-T, whose rows come point by point (a run of rows with
  one label is one point, in the release 739 points × 9 sentences).
- Codes, levels and groups: the option lists of CAT-GRA (the lite file), each the whole group
  of the right point, by code (`1063.“是”字句：表示等同或类属`); a code's first digit is its
  level. Two points share a label (语气助词：吧) and two codes: they take them in table order,
  the order of every other code. Points in no CAT-GRA list (152 in the release) belong to no
  group, take the level of the coded point before them, and are named `P<row>`.
- Confusing instances: CON-INS-F10, each question tied to its point through the CON-INS-T5F5
  question that shares its confusing instances and whose examples are that point's SINGLE-T
  sentences (which also places the F10 question whose label differs from SINGLE-T's by a
  typo); failing that, by a label only one point has.

A label is split at its first `：` into category and name (`方位名词：上、下` → `方位名词`,
`上、下`); a label without one is a category alone (`陈述句`). A group is named by what its
members' categories share (`介词` for 介词(引出对象), 介词(引出时间、处所)…).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api import Item
from .release_parse import Question, parse, sentence_key


@dataclass
class ReleasePoint:
    """One point as the release shows it."""

    row: int
    label: str
    examples: list[str]
    code: str | None = None
    group: str = ""
    confusers: list[str] = field(default_factory=list)


def _parsed(items: list[Item], bank: str) -> list[tuple[Item, Question]]:
    found = [(i, parse(bank, i.prompt.vars["text"])) for i in items if i.task == bank]
    ordered = sorted(found, key=lambda p: int(p[0].meta["source_id"]))
    return [(i, q) for i, q in ordered if q is not None]


def _points(items: list[Item]) -> list[ReleasePoint]:
    points: list[ReleasePoint] = []
    for row, (_, question) in enumerate(_parsed(items, "SINGLE-T"), start=1):
        if not points or points[-1].label != question.label:
            points.append(ReleasePoint(row=row, label=question.label or "", examples=[]))
        points[-1].examples.append(question.sentences[0])
    return points


def _group_name(labels: list[str]) -> str:
    categories = [label.split("：", 1)[0] for label in labels]
    shared = re.sub(r"[(（\d]+$", "", os.path.commonprefix(categories))
    return shared or categories[0]


def _codes_and_groups(points: list[ReleasePoint], items: list[Item], notes: list[str]) -> None:
    groups: dict[tuple[tuple[str, str], ...], None] = {}
    for _, question in _parsed(items, "CAT-GRA"):
        groups.setdefault(tuple(question.options), None)
    codes: dict[str, list[str]] = defaultdict(list)
    names: dict[str, str] = {}
    for members in groups:
        name = _group_name([label for _, label in members])
        if name in names.values():
            name = f"{name} {members[0][0]}"
        for code, label in members:
            codes[label].append(code)
            names[code] = name
    for point in points:
        waiting = sorted(codes.get(point.label, []))
        if waiting:
            point.code = waiting[0]
            codes[point.label].remove(point.code)
            point.group = names[point.code]
    left = sorted(c for cs in codes.values() for c in cs)
    if left:
        notes.append(f"CAT-GRA codes whose label no SINGLE-T point has: {', '.join(left)}")


def _owner(keys: set[str], by_sentence: dict[str, set[int]]) -> int | None:
    owners = {o for k in keys for o in by_sentence.get(k, set())}
    return next(iter(owners)) if len(owners) == 1 else None


def _confusers(points: list[ReleasePoint], items: list[Item], notes: list[str]) -> None:
    by_sentence: dict[str, set[int]] = defaultdict(set)
    for index, point in enumerate(points):
        for sentence in point.examples:
            by_sentence[sentence_key(sentence)].add(index)
    mixed = [{sentence_key(s) for s in q.sentences} for _, q in _parsed(items, "CON-INS-T5F5")]
    by_label: dict[str, list[int]] = defaultdict(list)
    for index, point in enumerate(points):
        by_label[point.label].append(index)
    for item, question in _parsed(items, "CON-INS-F10"):
        keys = {sentence_key(s) for s in question.sentences}
        owners = {_owner(m - keys, by_sentence) for m in mixed if m & keys} - {None}
        labelled = by_label.get(question.label or "", [])
        owner = next(iter(owners)) if len(owners) == 1 else None
        if owner is None and len(labelled) == 1:
            owner = labelled[0]
        if owner is None:
            notes.append(f"{item.id}: no single point to attach its confusing instances to")
            continue
        points[owner].confusers = list(question.sentences)


def _level(point: ReleasePoint, before: int | None) -> int:
    return int(point.code[0]) if point.code else (before or 1)


def release_points(items: list[Item], notes: list[str]) -> list[ReleasePoint]:
    """The release's points with their codes, groups, sentences and confusing instances."""
    points = _points(items)
    _codes_and_groups(points, items, notes)
    _confusers(points, items, notes)
    return points


def table_records(points: list[ReleasePoint]) -> list[dict[str, Any]]:
    """The points as records of a grammar-point table (`table.py`'s JSONL)."""
    records = []
    level: int | None = None
    for point in points:
        category, _, name = point.label.partition("：")
        level = _level(point, level)
        records.append(
            {
                "id": point.code or f"P{point.row}",
                "category": category,
                "name": name,
                "level": level,
                "group": point.group,
                "examples": point.examples,
                "confusers": point.confusers,
            }
        )
    return records


def write_release_table(items: list[Item], path: Path) -> list[str]:
    """Write the table the released items imply to `path` (JSONL); returns the notes."""
    notes: list[str] = []
    records = table_records(release_points(items, notes))
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return notes
