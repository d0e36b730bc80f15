"""The run viewer: `gramagents view RUN [RUN ...]` and every run's `report.html`.

A static site people open in a browser, from disk or served on 127.0.0.1: the overview
(models × tasks, the papers' table layouts, charts), an item browser that filters tens of
thousands of items by task, category, level, outcome and model and shows each item's prompt,
answers, extraction and score, and, for builds, the stage counts, the review queue and the
rejected agent outputs. See `site.py` for the files it writes.
"""

from .site import SiteResult, refresh_view, write_view

__all__ = ["SiteResult", "refresh_view", "write_view"]
