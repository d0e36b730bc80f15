"""Reading a viewer site back in tests: its data files and its tables."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


def data(site: Path, key: str) -> Any:
    """The payload of the data file `view/data/KEY.js`."""
    text = (site / "view" / "data" / f"{key}.js").read_text(encoding="utf-8")
    prefix = f"gvData({json.dumps(key)},"
    assert text.startswith(prefix) and text.endswith(");\n"), text[:80]
    return json.loads(text[len(prefix) : -3])


def rows_of(site: Path, key: str) -> list[Any]:
    """Every list row of a browser, in order."""
    index = data(site, f"{key}/index")
    shards = -(-index["n"] // index["shard"])
    return [row for s in range(shards) for row in data(site, f"{key}/rows-{s}")]


def details_of(site: Path, key: str) -> list[Any]:
    """Every full record of a browser, in order."""
    index = data(site, f"{key}/index")
    shards = -(-index["n"] // index["shard"])
    return [row for s in range(shards) for row in data(site, f"{key}/detail-{s}")]


def matching(index: dict[str, Any], **filters: Any) -> list[int]:
    """Rows the page shows under `filters`, by the page's own rules (app.js `apply`).

    Facet filters name a value (`task="SINGLE-T"`); `model` is a model's index, `outcome` an
    outcome code, `disagree` True for rows where the models read different answers.
    """
    facets = {f["name"]: f for f in index["facets"]}
    codes = {
        name: facets[name]["values"].index(value)
        for name, value in filters.items()
        if name in facets
    }
    model, outcome = filters.get("model"), filters.get("outcome")
    flags = index["flags"]
    rows = []
    for i in range(index["n"]):
        if any(facets[name]["rows"][i] != code for name, code in codes.items()):
            continue
        if outcome is not None:
            models = [model] if model is not None else range(len(index["models"]))
            if not any(flags[f"m{m}"][i] == outcome for m in models):
                continue
        if filters.get("disagree") and flags["disagree"][i] != "d":
            continue
        rows.append(i)
    return rows


class Tables(HTMLParser):
    """The `data-table` tables of a page: header texts and cells (`data-value` as a float)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list[Any]]] = {}
        self._table: dict[str, list[Any]] | None = None
        self._row: list[Any] | None = None
        self._cell: list[str] | None = None
        self._value: float | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if tag == "table" and attr.get("data-table"):
            self._table = self.tables[attr["data-table"] or ""] = {"header": [], "rows": []}
        elif self._table is not None and tag == "tr":
            self._row = []
        elif self._row is not None and tag in ("td", "th"):
            self._cell = []
            value = attr.get("data-value")
            self._value = float(value) if value is not None else None

    def handle_data(self, text: str) -> None:
        if self._cell is not None:
            self._cell.append(text)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            text = "".join(self._cell)
            self._row.append(self._value if self._value is not None else text)
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            if self._row and not self._table["header"]:
                self._table["header"] = self._row
            else:
                self._table["rows"].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def tables(page: Path) -> dict[str, dict[str, list[Any]]]:
    """The `data-table` tables of a page."""
    parser = Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.tables
