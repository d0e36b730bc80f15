"""The CPG bank builder, registered when a build first asks for it."""

from __future__ import annotations

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
from .banks import build_banks
from .params import TASK_PARAMS, BankParams


def build(
    view: BuildView, tasks: dict[str, BaseModel], options: BaseModel, resources: BuildResources
) -> list[Item]:
    """The banks from the points and their checked instances."""
    return build_banks(points_of(view), view.of_type(Instance), tasks, options, resources)


bank_builder(BankBuilderSpec(name="cpg", build=build, task_params=TASK_PARAMS, options=BankParams))
