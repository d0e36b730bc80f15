"""Grammar-book-guided probing (`../shared/seeds/001_*`, §3): from a grammar book to probes.

Material Inspector (the `grammar-book` reader: PDF, markdown or text, OCR when available),
Phrasing Atelier (section filter, sentence windows and table rows, the grammar-point
extractor, the merge of duplicates, the sentence-pair generator), Twin Forge (the
back-checker, the minimal-pair maker, the human-validation sample) and Proof Stand (Tasks 1-4
over seeds and numbers of options, and translation), with the report's Table 3, Figure 4 and
Figure 2.
"""

from ...api import (
    BUILD_SECTIONS,
    CHAINS,
    CHARTS,
    FILTERS,
    METRICS,
    REVIEWS,
    SOURCES,
    agents_in,
    bank_builder_in,
    record_file,
    report_files,
)
from . import tasks  # noqa: F401 - the task specs every eval of a grammar-book bank needs
from .records import BookSection, BookWindow, PointCheck
from .report import grammar_book_section

SOURCES.announce("grammar-book", f"{__name__}.reader")
for _name in ("book-sections", "book-windows"):
    FILTERS.announce(_name, f"{__name__}.atelier")
FILTERS.announce("book-point-merge", f"{__name__}.extract")
agents_in(["grammar-point-extractor"], f"{__name__}.extract")
agents_in(["sentence-pair-generator"], f"{__name__}.generate")
agents_in(["sentence-backcheck", "minimal-pair-maker"], f"{__name__}.forge")
agents_in(["section-classifier"], f"{__name__}.classify")
agents_in(["distractor-check"], f"{__name__}.crosscheck")
bank_builder_in("grammar-book", f"{__name__}.builder")
REVIEWS.announce("grammar-book", f"{__name__}.review")
for _chain in ("letter-set", "gb-translation"):
    CHAINS.announce(_chain, f"{__name__}.scoring")
for _metric in ("gb-set", "gb-choice", "gb-translation"):
    METRICS.announce(_metric, f"{__name__}.scoring")
record_file(BookSection, "sections.jsonl")
record_file(BookWindow, "windows.jsonl")
record_file(PointCheck, "point_checks.jsonl")
report_files("grammar-book", grammar_book_section)
CHARTS.announce("grammar-book-radar", f"{__name__}.radar")
BUILD_SECTIONS.announce("grammar-book", f"{__name__}.book_report")
