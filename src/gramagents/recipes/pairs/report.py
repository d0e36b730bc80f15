"""The minimal-pair section of an eval report: how each CLiMP file was read."""

from __future__ import annotations

from ...records import RunManifest
from ...report.markdown import markdown_table
from ...report.summary import Summary


def climp_files_section(manifest: RunManifest, summary: Summary) -> list[str]:
    """A table of the CLiMP files read, with their layout and pairs (none for other runs)."""
    files = (manifest.dataset or {}).get("climp_files")
    if not files:
        return []
    lines = [
        "## CLiMP files",
        "",
        "The layout each file was read in. A file of sentences only holds a pair on two "
        "consecutive lines, the grammatical sentence first.",
        "",
    ]
    lines += markdown_table(
        ["file", "layout", "pairs"], [[f["file"], f["layout"], f["pairs"]] for f in files]
    )
    return [*lines, ""]
