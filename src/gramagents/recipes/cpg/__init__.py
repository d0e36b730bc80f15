"""CPG-EVAL: Chinese pedagogical grammar banks (`../shared/seeds/000_*`, `graphs/cpg.yaml`).

A grammar-point table in (`grammar-table`), the instance rewriter, confusing-instance generator
and their back-checkers, the eight banks of §3.3 out; the released question files read back
(`--format cpg-eval`) with the golds the release determines; the paper's Table 3, invalid
answers per bank and the files read in the report.
"""

from ...api import FORMATS, SOURCES, agents_in, bank_builder_in, paper_table, report_files
from . import tasks  # noqa: F401 - the task specs every eval of a CPG bank needs
from .report import CPG_TABLE_3, cpg_lines

SOURCES.announce("grammar-table", f"{__name__}.table")
FORMATS.announce("cpg-eval", f"{__name__}.released")
bank_builder_in("cpg", f"{__name__}.builder")
agents_in(["instance-rewriter"], f"{__name__}.rewriter")
agents_in(["instance-backcheck", "confuser-backcheck"], f"{__name__}.backcheck")
agents_in(["confusing-instance-generator"], f"{__name__}.confuser")
paper_table("cpg-table-3", CPG_TABLE_3)
report_files("cpg", cpg_lines)
