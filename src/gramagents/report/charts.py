"""Charts recipes add to the run viewer (`gramagents view`), beside the engine's own.

A recipe registers a function of the run's manifest and summary that returns figures; each
figure is a Vega-Lite chart: an altair chart (anything with `to_dict()`) or the
specification as a dict. The function returns nothing for a run without the recipe's tasks.
Nothing here imports a plotting library: the functions do, when a page is written.

    def accuracy_by_options(manifest, summary):
        if not any(task.startswith("GB-") for _, task in summary.tallies):
            return []
        import altair as alt
        chart = alt.Chart(alt.Data(values=rows)).mark_line().encode(x="options:Q", y="acc:Q")
        return [Figure("Accuracy by number of options", chart, caption="The paper's Fig. 4.")]

    report_chart("grammar-book-options", accuracy_by_options)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..records import RunManifest
from .parts import PartsOfKind
from .summary import Summary


@dataclass(frozen=True)
class Figure:
    """One chart of a page."""

    title: str
    spec: Any
    """A Vega-Lite specification: a dict, or an object with `to_dict()` (an altair chart)."""
    caption: str = ""
    """A sentence under the chart: what it shows and how to read it."""

    def vega_lite(self) -> dict[str, Any]:
        """The specification as a dict."""
        spec = self.spec
        if hasattr(spec, "to_dict"):
            try:  # an altair chart: its schema check costs more than the page (its own charts
                spec = spec.to_dict(validate=False)  # are drawn by the browser test)
            except TypeError:  # another object with a plain `to_dict()`
                spec = spec.to_dict()
        if not isinstance(spec, dict):
            raise TypeError(f"figure '{self.title}': not a Vega-Lite specification")
        return spec


ChartMaker = Callable[[RunManifest, Summary], list[Figure]]
CHARTS: PartsOfKind[ChartMaker] = PartsOfKind("chart")
"""Recipes' charts for the run viewer, report parts of kind `chart` (figures; none when the run
has nothing of theirs)."""


def report_chart(name: str, maker: ChartMaker) -> ChartMaker:
    """Register a function that makes a recipe's charts of an eval run."""
    return CHARTS.register(name, maker)
