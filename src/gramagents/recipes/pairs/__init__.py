"""Published minimal-pair sets scored by log-likelihood: BLiMP and CLiMP (`--format`)."""

from ...api import FORMATS, report_section
from . import tasks  # noqa: F401 - BLIMP and CLIMP
from .report import climp_files_section

FORMATS.announce("blimp", f"{__name__}.reader")
FORMATS.announce("climp", f"{__name__}.climp")
report_section("climp-files", climp_files_section)
