"""EduEval: exam items per cognitive level (`../shared/seeds/003_*`, `graphs/edu.yaml`).

An exam-item folder in the EduEval layout in (`edueval`); the standardizer, distractor writer
and level router, the calibration and anomaly filters, and zero- and few-shot banks out; exam
items reviewed as a whole (`edu-items` review files); the paper's Tables 2-5 in the report.
"""

from ...api import (
    FILTERS,
    REVIEWS,
    SOURCES,
    agents_in,
    bank_builder_in,
    record_file,
    report_section,
)
from . import tasks  # noqa: F401 - the task specs every eval of an EduEval bank needs
from .report import edu_sections
from .sources import EduItem

SOURCES.announce("edueval", f"{__name__}.reader")
agents_in(["item-standardizer", "distractor-writer", "level-router"], f"{__name__}.agents")
FILTERS.announce("baseline-calibration", f"{__name__}.filters")
FILTERS.announce("item-anomalies", f"{__name__}.filters")
bank_builder_in("edu", f"{__name__}.builder")
REVIEWS.announce("edu-items", f"{__name__}.review")
record_file(EduItem, "standardized.jsonl")
report_section("edu", edu_sections)
