"""Syntax-QA: questions generated from constituency treebanks (`../shared/seeds/002_*`).

Penn Treebank bracketed trees in (`treebank`; `--source nltk:treebank` for NLTK's WSJ sample);
the nine knowledge points found by the patterns of `prompts/syntax/patterns.yaml`
(`syntax-extract`); True/False, Multiple Choice and Fill-in-the-Blank questions from
`prompts/syntax/questions.yaml`, drawn in balance (`syntax-questions`); an optional
back-checker for ambiguous answers (`syntax-backcheck`); zero- and few-shot banks (`syntax`);
accuracy, the order-aware FITB F1, OA, and the paper's tables in the report; OA against a
number each model's spec carries (`params=`, `tokens=`, `step=`) for a family of models
(Figures 4 and 7); the build report beside the paper's Tables 1 and 4.
"""

from ...api import (
    FILTERS,
    SOURCES,
    agents_in,
    bank_builder_in,
    build_report_section,
    record_file,
    report_chart,
    report_section,
)
from . import tasks  # noqa: F401 - the task specs every eval of a syntax bank needs
from .build_report import syntax_build_sections
from .records import SyntaxMatch, SyntaxQuestion, SyntaxTree
from .report import syntax_sections
from .series import series_charts, series_sections

SOURCES.announce("treebank", f"{__name__}.reader")
FILTERS.announce("syntax-extract", f"{__name__}.filters")
FILTERS.announce("syntax-questions", f"{__name__}.filters")
agents_in(["syntax-backcheck"], f"{__name__}.agents")
bank_builder_in("syntax", f"{__name__}.builder")
record_file(SyntaxTree, "trees.jsonl")
record_file(SyntaxMatch, "matches.jsonl")
record_file(SyntaxQuestion, "questions.jsonl")
report_section("syntax", syntax_sections)
report_section("syntax-series", series_sections)
report_chart("syntax-series", series_charts)
build_report_section("syntax", syntax_build_sections)
