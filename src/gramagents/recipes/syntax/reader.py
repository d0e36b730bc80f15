"""The `treebank` build source: a file or folder of bracketed trees, or `nltk:treebank`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ...api import InputError, ReadOptions, SourceData, source_reader
from .records import SyntaxTree
from .treebank import NLTK_SAMPLE, read_file, resolve, treebank_files
from .trees import convert

TREES = "syntax_trees"
"""The context key of the parsed trees (`trees.ParsedTree` by tree id)."""


class TreebankOptions(BaseModel):
    """Options of the `treebank` reader (the recipe's `source.options`)."""

    model_config = ConfigDict(extra="forbid")

    suffixes: list[str] | None = None
    """File name endings read in a folder (default: .mrg, .tree, .trees, .ptb, .txt,
    .bracketed)."""


@source_reader("treebank", unit="trees")
def read_treebank(path: Path, options: ReadOptions) -> SourceData:
    """Every tree of the source, in file order (`--limit N`: the first N trees)."""
    try:
        settings = TreebankOptions.model_validate(options.options)
    except ValidationError as exc:
        raise InputError("recipe", exc.errors()[0]["msg"], field="source.options") from None
    root = resolve(path)
    files = treebank_files(root)
    if settings.suffixes is not None and root.is_dir():
        files = [f for f in files if f.name.lower().endswith(tuple(settings.suffixes))]
    records: list[BaseModel] = []
    parsed = {}
    described = []
    for file in files:
        shown = file.name if root.is_file() else str(file.relative_to(root))
        trees = read_file(file, shown)
        described.append({"file": shown, "read": len(trees), "parsed": len(trees), "refused": 0})
        for raw in trees:
            if options.limit is not None and len(records) >= options.limit:
                break
            tree = convert(raw.tree)
            tree_id = f"{shown}#{raw.number}"
            parsed[tree_id] = tree
            records.append(
                SyntaxTree(
                    id=tree_id, file=shown, line=raw.line, sentence=tree.sentence, tree=raw.text
                )
            )
        if options.limit is not None and len(records) >= options.limit:
            break
    info: dict[str, Any] = {"trees": len(records)}
    if str(path) == NLTK_SAMPLE:
        info["location"] = str(root)
    return SourceData(
        records=records,
        context={TREES: parsed},
        stats={"files": len(described), "trees": len(records)},
        files=described,
        info=info,
        location=root,
    )
