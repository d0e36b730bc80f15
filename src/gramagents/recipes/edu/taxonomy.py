"""The EduAbility taxonomy from `taxonomy.yaml`, which the router prompt and the report read."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...api import GramagentsError, load_yaml_with_lines, read_utf8

DATA = Path(__file__).with_name("taxonomy.yaml")


@dataclass(frozen=True)
class Level:
    """One EduAbility level."""

    id: str
    order: int
    name: str
    zh: str
    definition: str
    dok: tuple[int, ...]
    bloom: tuple[str, ...]
    operations: tuple[str, ...]
    tasks: tuple[dict[str, Any], ...]
    aliases: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    data, _ = load_yaml_with_lines(DATA, read_utf8(DATA))
    return data  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def levels() -> tuple[Level, ...]:
    """The six levels, in order."""
    return tuple(
        Level(
            id=raw["id"],
            order=int(raw["order"]),
            name=raw["name"],
            zh=raw["zh"],
            definition=raw["definition"],
            dok=tuple(raw["dok"]),
            bloom=tuple(raw["bloom"]),
            operations=tuple(raw["operations"]),
            tasks=tuple(raw["tasks"]),
            aliases=tuple(str(a).lower() for a in raw.get("aliases", ())),
        )
        for raw in _data()["levels"]
    )


def level(name: str) -> Level:
    """A level by id, name, Chinese name, alias or order, or a folder name (`1_memory`)."""
    key = str(name).strip().lower()
    bare = re.sub(r"^[\d\s._-]+", "", key) or key
    for found in levels():
        names = (found.id, found.name.lower(), found.zh, *found.aliases)
        if key in (*names, str(found.order)) or bare in names:
            return found
    known = ", ".join(x.id for x in levels())
    raise GramagentsError(f"unknown EduAbility level '{name}' (known: {known})")


def principle() -> list[str]:
    """The two-step labelling principle."""
    return list(_data()["principle"])


def router_guide() -> str:
    """The taxonomy as the router's prompt shows it."""
    lines = ["EduAbility 认知层级（EduAbility taxonomy）："]
    for found in levels():
        dok = "/".join(str(d) for d in found.dok)
        lines.append(
            f"- {found.id}（{found.zh}，{found.name}）: {found.definition} "
            f"DOK {dok}; Bloom: {', '.join(found.bloom)}."
        )
    lines.append("标注原则：")
    lines.extend(f"- {step}" for step in principle())
    return "\n".join(lines)


def task_metric(shape: str) -> str:
    """The metric of a task shape (accuracy, rouge_l, rmse_qwk_pearson, judge)."""
    for found in levels():
        for task in found.tasks:
            if task["shape"] == shape:
                return str(task["metric"])
    return "accuracy"


def _compact(name: str) -> str:
    return re.sub(r"[\W_]+", "", name).lower()


@lru_cache(maxsize=256)
def paper_task(file_stem: str) -> dict[str, Any] | None:
    """The paper's task (`id` 1-1 … 6-4, `name`, `metric`) a release's file is, by its name.

    `Junior_Ethics Scenario` is 6-2 (Junior Ethics Scenario); a file no paper task is named
    like (a hand-made layout's `初中历史知识`) gives None.
    """
    wanted = _compact(file_stem)
    for found in levels():
        for task in found.tasks:
            if _compact(str(task["name"])) == wanted:
                return {**task, "level": found.id}
    return None
