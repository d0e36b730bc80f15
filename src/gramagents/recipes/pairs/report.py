"""The minimal-pair section of an eval report: which files were read, and how."""

from __future__ import annotations

from ...api import RunManifest, Summary, markdown_table


def climp_files_section(manifest: RunManifest, summary: Summary) -> list[str]:
    """A table of the CLiMP or BLiMP files read, with their pairs (none for other runs).

    CLiMP files also say the layout each was read in.
    """
    dataset = manifest.dataset or {}
    climp, blimp = dataset.get("climp_files"), dataset.get("pair_files")
    if climp:
        lines = [
            "## CLiMP files",
            "",
            "The layout each file was read in. A file of sentences only holds a pair on two "
            "consecutive lines, the grammatical sentence first.",
            "",
        ]
        lines += markdown_table(
            ["file", "layout", "pairs"], [[f["file"], f["layout"], f["pairs"]] for f in climp]
        )
        return [*lines, ""]
    if blimp:
        lines = ["## BLiMP files", ""]
        lines += markdown_table(["file", "pairs"], [[f["file"], f["pairs"]] for f in blimp])
        return [*lines, ""]
    return []
