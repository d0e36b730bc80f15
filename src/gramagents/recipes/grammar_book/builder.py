"""The grammar-book bank builder, registered under the name recipes use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...records import Item
from ...tasks.registry import BankBuilderSpec, bank_builder
from ...workflow.nodes import BuildView
from .banks import TASK_PARAMS, BankOptions, build_banks


def settings_built(folder: Path, view: BuildView, items: list[Item]) -> dict[str, Any]:
    """Which numbers of options each probing task was built with (too few points drop some)."""
    built: dict[str, list[int]] = {}
    for item in items:
        n = item.meta.get("n_options")
        if n is not None and n not in built.setdefault(item.task, []):
            built[item.task].append(n)
    return {"options_built": built}


bank_builder(
    BankBuilderSpec(
        name="grammar-book",
        build=build_banks,
        task_params=TASK_PARAMS,
        options=BankOptions,
        artifacts=settings_built,
    )
)
