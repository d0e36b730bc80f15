"""The GEC bank builder, registered when a build first asks for it (tasks/registry.py)."""

from ...tasks.registry import BankBuilderSpec, bank_builder
from .banks import GEC_PARAMS, GecBankParams, build_gec_banks, write_m2_files

bank_builder(
    BankBuilderSpec(
        name="gec",
        build=build_gec_banks,
        task_params=GEC_PARAMS,
        options=GecBankParams,
        artifacts=write_m2_files,
    )
)
