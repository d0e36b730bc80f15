"""Everything a recipe registers, in one place (see `docs/adding-a-recipe.md`).

A recipe is a package under `gramagents/recipes/` (or a module named by a `gramagents.recipes`
entry point) whose `__init__` registers its parts with these functions. Heavy parts may be
announced by module (`announce`) and are imported only when a build or eval asks for them.
"""

from __future__ import annotations

from .agents.base import (
    AgentContext,
    AgentResult,
    AgentSpec,
    AgentTask,
    InstanceTask,
    PointTask,
    agent,
    agents_in,
    per_instance,
)
from .plugins import COMMANDS, Registry, load_recipes
from .report.build import build_report_section
from .report.charts import Figure, report_chart
from .report.layouts import Column, Layout, paper_table
from .report.markdown import report_files, report_section
from .scoring.extract import Extraction, Invalid, chain
from .scoring.metrics import ItemScore, metric
from .sources import ReadOptions, SourceData, source_reader
from .sources.datasets import Dataset, dataset_format
from .tasks.registry import (
    Aggregate,
    BankBuilderSpec,
    BuildResources,
    TaskSpec,
    bank_builder,
    bank_builder_in,
    constant,
    task,
)
from .workflow.nodes import (
    BuildView,
    FilterSpec,
    NodeEnv,
    NodeUpdate,
    filter_node,
    record_file,
)
from .workflow.review import ReviewSpec

__all__ = [
    "COMMANDS",
    "AgentContext",
    "AgentResult",
    "AgentSpec",
    "AgentTask",
    "Aggregate",
    "BankBuilderSpec",
    "BuildResources",
    "BuildView",
    "Column",
    "Dataset",
    "Extraction",
    "FilterSpec",
    "Figure",
    "InstanceTask",
    "Invalid",
    "ItemScore",
    "Layout",
    "NodeEnv",
    "NodeUpdate",
    "PointTask",
    "ReadOptions",
    "Registry",
    "ReviewSpec",
    "SourceData",
    "TaskSpec",
    "agent",
    "agents_in",
    "bank_builder",
    "bank_builder_in",
    "build_report_section",
    "chain",
    "constant",
    "dataset_format",
    "filter_node",
    "load_recipes",
    "metric",
    "paper_table",
    "per_instance",
    "record_file",
    "report_chart",
    "report_files",
    "report_section",
    "source_reader",
    "task",
]
