"""The grammar-book bank builder, registered under the name recipes use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...api import BankBuilderSpec, BuildView, Instance, Item, bank_builder
from .banks import TASK_PARAMS, BankOptions, build_banks
from .book_report import backcheck_summary


def settings_built(folder: Path, view: BuildView, items: list[Item]) -> dict[str, Any]:
    """What the banks were built with, for the manifest.

    The numbers of options each probing task was built with (too few points drop some) and
    the back-check's shares (§3.3: grammatical sentences, mean translation quality).
    """
    built: dict[str, list[int]] = {}
    for item in items:
        n = item.meta.get("n_options")
        if n is not None and n not in built.setdefault(item.task, []):
            built[item.task].append(n)
    found: dict[str, Any] = {"options_built": built}
    backcheck = backcheck_summary(view.of_type(Instance))
    if backcheck is not None:
        found["backcheck"] = backcheck
    return found


bank_builder(
    BankBuilderSpec(
        name="grammar-book",
        build=build_banks,
        task_params=TASK_PARAMS,
        options=BankOptions,
        artifacts=settings_built,
        extra="grammar-book",
    )
)
