"""Text in markdown as text, whatever characters it holds.

What data (ids, categories, sentences, model labels) becomes in `report.md` and in the
recipes' report sections, so that it shows as written and never turns into a link, an image,
a heading or a new table cell.
"""

from __future__ import annotations

import re


class Markdown(str):
    """Text that is markdown on purpose (a cell `markdown_table` leaves as it is but for `|`)."""


_MARKUP = re.compile(r"[\\`*\[\]<|~]|(?<!\w)_|_(?!\w)|&(?=#?\w+;)")
"""What makes markdown of text: emphasis, code, links and images, HTML, table cells,
entities (an underscore inside a word is text already)."""
_LINE_START = re.compile(r"^(\s*)(?:([#>+=-])|(\d+)([.)]))")
"""What makes a block of a line: headings, quotes, lists, rules."""


def _inline(value: object) -> str:
    text = " ".join(str(value).splitlines())
    return _MARKUP.sub(lambda m: "\\" + m.group(0), text)


def md_text(value: object) -> str:
    """`value` (dataset text, a model label) as markdown that shows exactly that text.

    Line breaks become spaces, and every character that would make a link, an image, code,
    emphasis, HTML, a heading, a list or a new table cell is escaped with a backslash.
    """
    return _LINE_START.sub(_block_escape, _inline(value), count=1)


def _block_escape(match: re.Match[str]) -> str:
    space, mark, digits, dot = match.groups()
    return f"{space}\\{mark}" if mark else f"{space}{digits}\\{dot}"


def md_cell(value: object) -> str:
    """A table cell: numbers as `str` gives them, `Markdown` kept, anything else as text."""
    if isinstance(value, Markdown):
        return " ".join(value.splitlines()).replace("|", "\\|")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return _inline(value)


def code_span(value: object) -> str:
    """`value` as inline code whatever backticks it holds (line breaks become spaces)."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"
