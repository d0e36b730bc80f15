"""The one module a recipe imports from the engine (see `docs/adding-a-recipe.md`).

Registration decorators and registries, the record types, the errors, the agent and task base
types and the helpers the packaged recipes use, under one name each. A recipe imports
`gramagents.api` (or names from it) and never an engine module directly; the architecture test
holds every module under `gramagents/recipes/` to that.

Importing this module imports nothing else: each name is resolved from `EXPORTS` the first time
it is asked for (PEP 562), so a recipe's `__init__` pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

EXPORTS: dict[str, str] = {
    # Registration
    "agent": "gramagents.agents.base:agent",
    "agents_in": "gramagents.agents.base:agents_in",
    "source_reader": "gramagents.sources:source_reader",
    "SOURCES": "gramagents.sources:SOURCES",
    "dataset_format": "gramagents.sources.datasets:dataset_format",
    "FORMATS": "gramagents.sources.datasets:FORMATS",
    "task": "gramagents.tasks.registry:task",
    "bank_builder": "gramagents.tasks.registry:bank_builder",
    "bank_builder_in": "gramagents.tasks.registry:bank_builder_in",
    "chain": "gramagents.scoring.extract:chain",
    "CHAINS": "gramagents.scoring.extract:CHAINS",
    "metric": "gramagents.scoring.metrics:metric",
    "METRICS": "gramagents.scoring.metrics:METRICS",
    "filter_node": "gramagents.workflow.nodes:filter_node",
    "FILTERS": "gramagents.workflow.nodes:FILTERS",
    "record_file": "gramagents.workflow.nodes:record_file",
    "REVIEWS": "gramagents.workflow.review:REVIEWS",
    "COMMANDS": "gramagents.plugins:COMMANDS",
    "Registry": "gramagents.plugins:Registry",
    "load_recipes": "gramagents.plugins:load_recipes",
    "report_section": "gramagents.report.markdown:report_section",
    "report_files": "gramagents.report.markdown:report_files",
    "build_report_section": "gramagents.report.build:build_report_section",
    "BUILD_SECTIONS": "gramagents.report.build:BUILD_SECTIONS",
    "report_chart": "gramagents.report.charts:report_chart",
    "CHARTS": "gramagents.report.charts:CHARTS",
    "paper_table": "gramagents.report.layouts:paper_table",
    # Records
    "Record": "gramagents.records:Record",
    "GrammarPoint": "gramagents.records:GrammarPoint",
    "Instance": "gramagents.records:Instance",
    "Provenance": "gramagents.records:Provenance",
    "SourceRef": "gramagents.records:SourceRef",
    "CheckVerdict": "gramagents.records:CheckVerdict",
    "MinimalPair": "gramagents.records:MinimalPair",
    "Item": "gramagents.records:Item",
    "PromptParts": "gramagents.records:PromptParts",
    "GenParams": "gramagents.records:GenParams",
    "ChatRequest": "gramagents.records:ChatRequest",
    "Conditioning": "gramagents.records:Conditioning",
    "RunManifest": "gramagents.records:RunManifest",
    # Errors
    "GramagentsError": "gramagents.errors:GramagentsError",
    "InputError": "gramagents.errors:InputError",
    "SpecError": "gramagents.errors:SpecError",
    "RunError": "gramagents.errors:RunError",
    "MissingDependency": "gramagents.errors:MissingDependency",
    "require": "gramagents.extras:require",
    # Agents
    "AgentContext": "gramagents.agents.base:AgentContext",
    "AgentResult": "gramagents.agents.base:AgentResult",
    "AgentSpec": "gramagents.agents.base:AgentSpec",
    "AgentTask": "gramagents.agents.base:AgentTask",
    "InstanceTask": "gramagents.agents.base:InstanceTask",
    "PointTask": "gramagents.agents.base:PointTask",
    "per_instance": "gramagents.agents.base:per_instance",
    "points_of": "gramagents.agents.base:points_of",
    "point_vars": "gramagents.agents.base:point_vars",
    "normalise": "gramagents.agents.base:normalise",
    "judge_instance": "gramagents.agents.checks:judge",
    "one_line": "gramagents.agents.checks:one_line",
    "Reason": "gramagents.agents.checks:Reason",
    "not_copied": "gramagents.agents.checks:not_copied",
    "calls_to_reach": "gramagents.agents.base:calls_to_reach",
    # Sources
    "ReadOptions": "gramagents.sources:ReadOptions",
    "SourceData": "gramagents.sources:SourceData",
    "RepeatedIds": "gramagents.sources.duplicates:RepeatedIds",
    "point_source": "gramagents.sources.points:point_source",
    "Dataset": "gramagents.sources.datasets:Dataset",
    "read_dataset": "gramagents.sources.datasets:read_dataset",
    "read_utf8": "gramagents.sources._text:read_utf8",
    "parse_json_line": "gramagents.sources._text:parse_json_line",
    "jsonl_rows": "gramagents.sources._text:iter_jsonl",
    "csv_rows": "gramagents.sources._text:iter_csv",
    "csv_reader": "gramagents.sources._text:csv_reader",
    "load_yaml_with_lines": "gramagents.sources._text:load_yaml_with_lines",
    "unique_points": "gramagents.sources._text:unique_points",
    "locate": "gramagents.sources._text:locate",
    # Build nodes, banks and review
    "BuildView": "gramagents.workflow.nodes:BuildView",
    "NodeEnv": "gramagents.workflow.nodes:NodeEnv",
    "NodeUpdate": "gramagents.workflow.nodes:NodeUpdate",
    "FilterSpec": "gramagents.workflow.nodes:FilterSpec",
    "cross_validated_labels": "gramagents.workflow.filters:cross_validated_labels",
    "near_duplicates": "gramagents.workflow.filters:near_duplicates",
    "BankBuilderSpec": "gramagents.tasks.registry:BankBuilderSpec",
    "BuildResources": "gramagents.tasks.registry:BuildResources",
    "BuildResult": "gramagents.workflow.build:BuildResult",
    "finish_build": "gramagents.workflow.build:finish_build",
    "rebuild_banks": "gramagents.workflow.build:rebuild_banks",
    "ReviewJob": "gramagents.workflow.review:ReviewJob",
    "ReviewSpec": "gramagents.workflow.review:ReviewSpec",
    "ReviewSettings": "gramagents.workflow.recipe:ReviewSettings",
    "apply_decisions": "gramagents.workflow.review:apply_decisions",
    "human_verdict": "gramagents.workflow.review:human_verdict",
    "read_review": "gramagents.workflow.review:read_review",
    "write_review": "gramagents.workflow.review:write_review",
    # Tasks and scoring
    "TaskSpec": "gramagents.tasks.registry:TaskSpec",
    "Aggregate": "gramagents.tasks.registry:Aggregate",
    "constant": "gramagents.tasks.registry:constant",
    "choice_form": "gramagents.tasks.registry:choice_form",
    "Extraction": "gramagents.scoring.extract:Extraction",
    "Invalid": "gramagents.scoring.extract:Invalid",
    "Meta": "gramagents.scoring.extract:Meta",
    "HEDGE": "gramagents.scoring.extract:HEDGE",
    "CONFLICT": "gramagents.scoring.extract:CONFLICT",
    "ItemScore": "gramagents.scoring.metrics:ItemScore",
    "nfkc": "gramagents.scoring.normalise:nfkc",
    "quoted_options": "gramagents.scoring.options:quoted_options",
    "disagrees": "gramagents.scoring.options:disagrees",
    "offers_alternatives": "gramagents.scoring.choice:offers_alternatives",
    "lcs_length": "gramagents.scoring.overlap:lcs_length",
    "lcs_overlap": "gramagents.scoring.overlap:lcs_overlap",
    "pearson": "gramagents.judging.statistics:pearson",
    "kendall": "gramagents.judging.statistics:kendall",
    "quadratic_kappa": "gramagents.judging.statistics:quadratic_kappa",
    # Models, prompts and files
    "parse_spec": "gramagents.models.spec:parse_spec",
    "series_number": "gramagents.models.spec:series_number",
    "SERIES_OPTIONS": "gramagents.models.spec:SERIES_OPTIONS",
    "PromptTemplate": "gramagents.templates:PromptTemplate",
    "load_prompt": "gramagents.templates:load_prompt",
    "split_front_matter": "gramagents.templates:split_front_matter",
    "find_resource": "gramagents.resources:find",
    "file_hash": "gramagents.resources:file_hash",
    "dense": "gramagents.runtime.embeddings:dense",
    "safe_name": "gramagents.runtime.paths:safe_name",
    "iter_jsonl": "gramagents.runtime.rundir:iter_jsonl",
    "write_atomic": "gramagents.runtime.rundir:write_atomic",
    # Reports
    "Summary": "gramagents.report.summary:Summary",
    "Tally": "gramagents.report.summary:Tally",
    "markdown_table": "gramagents.report.markdown:markdown_table",
    "Markdown": "gramagents.report.mdtext:Markdown",
    "md_text": "gramagents.report.mdtext:md_text",
    "code_span": "gramagents.report.mdtext:code_span",
    "Layout": "gramagents.report.layouts:Layout",
    "Column": "gramagents.report.layouts:Column",
    "Figure": "gramagents.report.charts:Figure",
    "radar_chart": "gramagents.report.view.plots:radar_chart",
    "series_lines": "gramagents.report.view.plots:series_lines",
}
"""Each public name, as `module:attribute` where it lives."""

__all__ = sorted(EXPORTS)

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from .agents.base import (
        AgentContext,
        AgentResult,
        AgentSpec,
        AgentTask,
        InstanceTask,
        PointTask,
        agent,
        agents_in,
        calls_to_reach,
        normalise,
        per_instance,
        point_vars,
        points_of,
    )
    from .agents.checks import Reason, not_copied, one_line
    from .agents.checks import judge as judge_instance
    from .errors import GramagentsError, InputError, MissingDependency, RunError, SpecError
    from .extras import require
    from .judging.statistics import kendall, pearson, quadratic_kappa
    from .models.spec import SERIES_OPTIONS, parse_spec, series_number
    from .plugins import COMMANDS, Registry, load_recipes
    from .records import (
        ChatRequest,
        CheckVerdict,
        Conditioning,
        GenParams,
        GrammarPoint,
        Instance,
        Item,
        MinimalPair,
        PromptParts,
        Provenance,
        Record,
        RunManifest,
        SourceRef,
    )
    from .report.build import BUILD_SECTIONS, build_report_section
    from .report.charts import CHARTS, Figure, report_chart
    from .report.layouts import Column, Layout, paper_table
    from .report.markdown import markdown_table, report_files, report_section
    from .report.mdtext import Markdown, code_span, md_text
    from .report.summary import Summary, Tally
    from .report.view.plots import radar_chart, series_lines
    from .resources import file_hash
    from .resources import find as find_resource
    from .runtime.embeddings import dense
    from .runtime.paths import safe_name
    from .runtime.rundir import iter_jsonl, write_atomic
    from .scoring.choice import offers_alternatives
    from .scoring.extract import CHAINS, CONFLICT, HEDGE, Extraction, Invalid, Meta, chain
    from .scoring.metrics import METRICS, ItemScore, metric
    from .scoring.normalise import nfkc
    from .scoring.options import disagrees, quoted_options
    from .scoring.overlap import lcs_length, lcs_overlap
    from .sources import SOURCES, ReadOptions, SourceData, source_reader
    from .sources._text import (
        csv_reader,
        load_yaml_with_lines,
        locate,
        parse_json_line,
        read_utf8,
        unique_points,
    )
    from .sources._text import iter_csv as csv_rows
    from .sources._text import iter_jsonl as jsonl_rows
    from .sources.datasets import FORMATS, Dataset, dataset_format, read_dataset
    from .sources.duplicates import RepeatedIds
    from .sources.points import point_source
    from .tasks.registry import (
        Aggregate,
        BankBuilderSpec,
        BuildResources,
        TaskSpec,
        bank_builder,
        bank_builder_in,
        choice_form,
        constant,
        task,
    )
    from .templates import PromptTemplate, load_prompt, split_front_matter
    from .workflow.build import BuildResult, finish_build, rebuild_banks
    from .workflow.filters import cross_validated_labels, near_duplicates
    from .workflow.nodes import (
        FILTERS,
        BuildView,
        FilterSpec,
        NodeEnv,
        NodeUpdate,
        filter_node,
        record_file,
    )
    from .workflow.recipe import ReviewSettings
    from .workflow.review import (
        REVIEWS,
        ReviewJob,
        ReviewSpec,
        apply_decisions,
        human_verdict,
        read_review,
        write_review,
    )


__getattr__, __dir__ = lazy_exports(__name__, globals(), EXPORTS)
