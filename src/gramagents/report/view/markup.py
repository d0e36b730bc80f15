"""Small HTML builders the viewer's pages share: tables, cards, facts, figures, markdown."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from html import escape, unescape
from pathlib import Path
from urllib.parse import quote

from ...runtime.paths import inside
from ..charts import Figure


def item_address(item_id: str, page: str = "report.html") -> str:
    """The address that opens one item in a run's viewer: `report.html#item=ID`.

    The id is percent-encoded whole (ids hold `/`, `#`, `@` and Chinese); the page decodes it,
    opens its Items tab on the item's page and shows the item.
    """
    return f"{page}#item={quote(item_id, safe='')}"


class Num:
    """A number in a table cell: shown rounded, kept exact in `data-value`, shaded by score."""

    def __init__(
        self,
        value: float | None,
        digits: int = 3,
        shade: bool = False,
        note: str = "",
        percent: bool = False,
    ) -> None:
        self.value = value
        self.digits = digits
        self.shade = shade
        self.note = note
        self.percent = percent

    def html(self) -> str:
        """The `<td>` of the number."""
        if self.value is None:
            return '<td class="num none">—</td>'
        if self.percent:
            shown = f"{100 * self.value:.{self.digits}f}%"
        else:
            shown = f"{self.value:.{self.digits}f}"
        style = ""
        if self.shade and 0.0 <= self.value <= 1.0:
            style = f' style="--score:{self.value:.3f}"'
        note = f'<span class="note">{escape(self.note)}</span>' if self.note else ""
        shaded = " shade" if style else ""
        return f'<td class="num{shaded}" data-value="{self.value!r}"{style}>{shown}{note}</td>'


Cell = str | int | float | Num | None


def _cell(value: Cell) -> str:
    if isinstance(value, Num):
        return value.html()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'<td class="num" data-value="{value!r}">{value:,}</td>'
    return f"<td>{escape('' if value is None else str(value))}</td>"


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    name: str = "",
    row_classes: Sequence[str] | None = None,
) -> str:
    """A table (horizontally scrollable when wide); `name` becomes its `data-table`."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for index, row in enumerate(rows):
        cls = row_classes[index] if row_classes and index < len(row_classes) else ""
        attr = f' class="{cls}"' if cls else ""
        body.append(f"<tr{attr}>" + "".join(_cell(c) for c in row) + "</tr>")
    data = f' data-table="{escape(name)}"' if name else ""
    return (
        f'<div class="table-wrap"><table{data}><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def card(title: str, body: str, note: str = "", anchor: str = "") -> str:
    """A titled section of the page."""
    ident = f' id="{escape(anchor)}"' if anchor else ""
    lead = f'<p class="lead">{escape(note)}</p>' if note else ""
    return f'<section class="card"{ident}><h2>{escape(title)}</h2>{lead}{body}</section>'


def facts(pairs: Sequence[tuple[str, str | int | None]]) -> str:
    """Key facts as a grid of labelled values (pairs without a value are left out)."""
    items = [
        f'<div class="fact"><dt>{escape(k)}</dt><dd>{escape(_plain(v))}</dd></div>'
        for k, v in pairs
        if v is not None and v != ""
    ]
    return f'<dl class="facts">{"".join(items)}</dl>'


def _plain(value: str | int) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def badge(text: str, kind: str) -> str:
    """A small coloured label."""
    return f'<span class="badge {escape(kind)}">{escape(text)}</span>'


class Figures:
    """The charts of a page: each one's specification goes into the page as JSON."""

    def __init__(self) -> None:
        self.count = 0

    def html(self, figure: Figure) -> str:
        """A figure: the chart's container, its specification and its caption."""
        self.count += 1
        ident = f"spec-{self.count}"
        spec = inline_json(figure.vega_lite())
        caption = f"<figcaption>{escape(figure.caption)}</figcaption>" if figure.caption else ""
        return (
            f'<figure class="chart"><h3>{escape(figure.title)}</h3>'
            f'<div class="vega" data-spec="{ident}"></div>{caption}'
            f'<script type="application/json" id="{ident}">{spec}</script></figure>'
        )


_NUMBER_CELL = re.compile(r"<td>([−+-]?\d[\d,.]*%?|—|–)</td>")
"""A markdown table's cell holding a number (or a dash for none): aligned as numbers are."""


_INLINE_JSON = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}
_LINE_ENDS = {ord("\u2028"): "\\u2028", ord("\u2029"): "\\u2029"}


def inline_json(value: object) -> str:
    r"""`value` as JSON to put inside a `<script>` element of the page.

    `<`, `>` and `&` are written as `\u003c`, `\u003e` and `\u0026` (the same strings to
    a JSON reader), so no text in the data (`</script>`, `<!--<script>`) can end the element
    or change how the browser reads the rest of the page.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.translate(_INLINE_JSON).translate(_LINE_ENDS)


def markdown(lines: list[str] | str) -> str:
    """Markdown (a recipe's report section, `agreement.md`) as HTML, tables included.

    Raw HTML is shown as text and links are not made (a section shows data as text, see
    `report.mdtext`); images stay, for `inline_images` to check and inline.
    """
    from markdown_it import MarkdownIt

    text = lines if isinstance(lines, str) else "\n".join(lines)
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    parser.disable(["link", "autolink"])
    rendered = parser.render(text)
    rendered = _NUMBER_CELL.sub(r'<td class="num">\1</td>', rendered)
    return rendered.replace("<table>", '<div class="table-wrap"><table class="md">').replace(
        "</table>", "</table></div>"
    )


_IMAGE = re.compile(r'<img src="([^"]*)" alt="([^"]*)"[^>]*>')
"""An image of a rendered markdown section (markdown-it writes `src` first, then `alt`)."""
_MEDIA = {".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg"}


def inline_images(html: str, folder: Path) -> str:
    """`html` with its images as data URIs read from files in `folder`.

    A recipe's file section shows its plots by paths relative to the run folder; inlined,
    they show wherever the page is written (`--out`, several runs), and the page stays one
    self-contained site. Only a file inside `folder` is read: an image named by an absolute
    path, a URL, `..` or a symlink out of the folder shows as its alt text; one that is not
    there, or of a kind not listed, keeps its relative path.
    """

    def data_uri(match: re.Match[str]) -> str:
        source = unescape(match.group(1))
        path = inside(folder, source) if ":" not in source else None
        if path is None:
            return f'<span class="image-refused">{match.group(2)}</span>'
        media = _MEDIA.get(path.suffix.lower())
        if media is None or not path.is_file():
            return match.group(0)
        encoded = base64.b64encode(path.read_bytes()).decode("ascii")
        return f'<img src="data:{media};base64,{encoded}" alt="{match.group(2)}">'

    return _IMAGE.sub(data_uri, html)
