"""The CPG bank builder, registered when a build first asks for it."""

from __future__ import annotations

from pydantic import BaseModel

from ... import api
from .banks import build_banks
from .params import TASK_PARAMS, BankParams


def build(
    view: api.BuildView,
    tasks: dict[str, BaseModel],
    options: BaseModel,
    resources: api.BuildResources,
) -> list[api.Item]:
    """The banks from the points and their checked instances."""
    return build_banks(api.points_of(view), view.of_type(api.Instance), tasks, options, resources)


api.bank_builder(
    api.BankBuilderSpec(name="cpg", build=build, task_params=TASK_PARAMS, options=BankParams)
)
