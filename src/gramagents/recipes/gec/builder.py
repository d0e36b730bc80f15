"""The GEC bank builder, registered when a build first asks for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ...api import (
    BankBuilderSpec,
    BuildResources,
    BuildView,
    Instance,
    Item,
    bank_builder,
    points_of,
)
from .banks import GEC_PARAMS, GecBankParams, build_gec_banks, write_m2_files


def build(
    view: BuildView, tasks: dict[str, BaseModel], options: BaseModel, resources: BuildResources
) -> list[Item]:
    """The banks from the grammar items and their checked pairs."""
    return build_gec_banks(points_of(view), view.of_type(Instance), tasks, options, resources)


def artifacts(folder: Path, view: BuildView, items: list[Item]) -> dict[str, Any]:
    """M2 files per grammar item."""
    return write_m2_files(folder, points_of(view), view.of_type(Instance), items)


bank_builder(
    BankBuilderSpec(
        name="gec",
        build=build,
        task_params=GEC_PARAMS,
        options=GecBankParams,
        artifacts=artifacts,
        extra="gec",
    )
)
