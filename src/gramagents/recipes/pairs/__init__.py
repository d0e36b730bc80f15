"""Published minimal-pair sets scored by log-likelihood: BLiMP and CLiMP (`--format`)."""

from ...sources.datasets import FORMATS
from . import tasks  # noqa: F401 - BLIMP and CLIMP

FORMATS.announce("blimp", f"{__name__}.reader")
FORMATS.announce("climp", f"{__name__}.reader")
