"""The CPG bank builder, registered when a build first asks for it (tasks/registry.py)."""

from ...tasks.registry import BankBuilderSpec, bank_builder
from .banks import build_banks
from .params import TASK_PARAMS, BankParams

bank_builder(
    BankBuilderSpec(name="cpg", build=build_banks, task_params=TASK_PARAMS, options=BankParams)
)
