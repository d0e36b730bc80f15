"""CTSEG: targeted evaluation of grammatical error correction (`../shared/seeds/004_*`).

A grammar-item list with CEFR levels in (`grammar-items`), the minimal-pair generator and its
back-checker, the GEC banks with M2 files per item out; corrections scored in M2 (`m2`
metric, `gramagents m2`), the paper's Tables 3, 4 and 6 in the report.
"""

from ...api import CHAINS, COMMANDS, METRICS, SOURCES, agents_in, bank_builder_in, report_section
from . import tasks  # noqa: F401 - the task specs every eval of a GEC bank needs
from .report import gec_sections

SOURCES.announce("grammar-items", f"{__name__}.items")
bank_builder_in("gec", f"{__name__}.builder")
agents_in(["minimal-pair-generator", "pair-backcheck"], f"{__name__}.agents")
CHAINS.announce("correction", f"{__name__}.scoring")
METRICS.announce("m2", f"{__name__}.scoring")
COMMANDS.announce("m2", f"{__name__}.cli")
report_section("gec", gec_sections)
