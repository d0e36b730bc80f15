"""The `edueval` build source: an EduEval layout read by rules into standardized items."""

from __future__ import annotations

from pathlib import Path

from ...api import InputError, ReadOptions, SourceData, source_reader
from .sources import read_edueval


@source_reader("edueval", unit="items")
def edueval_source(path: Path, options: ReadOptions) -> SourceData:
    """Items the rules standardized, then the lines they could not (for the standardizer)."""
    if not path.is_dir():
        raise InputError(path, "the EduEval source is a folder with one folder per level")
    result = read_edueval(path)
    items, unparsed = result.items, result.unparsed
    if options.limit is not None:
        items, unparsed = items[: options.limit], unparsed[: options.limit]
    return SourceData(
        records=[*items, *unparsed],
        stage="ingest",
        stats={
            "read": len(items) + len(unparsed) + len(result.duplicates),
            "parsed": len(items),
            "unparsed": len(unparsed),
            **({"duplicates": len(result.duplicates)} if result.duplicates else {}),
            "warnings": len(result.warnings),
        },
        files=result.files,
        warnings=result.warnings,
        duplicates=result.duplicates,
    )
