"""`gramagents export RUN --to parquet|hf DIR`: a built dataset, ready to share.

The folder holds the items (sources/exported.py says the columns) as Parquet under `data/`
(the layout the Hugging Face Hub reads as a `test` split) or as `Dataset.save_to_disk` writes
it, a dataset card (`README.md`: recipe, counts per task, hashes, licence, from the build
manifest) and `gramagents.json` (the build manifest and the data files' sha256). It is written
in a temporary folder beside DIR and renamed into place, so a failed export leaves nothing.
`gramagents eval DIR` reads it back.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from ..errors import InputError
from ..extras import require
from ..records import BuildManifest, Item
from ..report.mdtext import code_span, md_cell, md_text
from ..runtime.run import MANIFEST, Run
from ..runtime.rundir import temporary_folder
from ..sources.datasets import read_items
from ..sources.exported import COLUMNS, EXPORT_INFO, item_row

ExportFormat = Literal["parquet", "hf"]
SPLIT = "test"
PARQUET_FILE = f"data/{SPLIT}-00000-of-00001.parquet"


@dataclass
class ExportResult:
    """What an export wrote."""

    folder: Path
    items: int
    files: dict[str, str]
    """Data file (relative to the folder) to its sha256."""
    license: str


def _check_counts(items: list[Item], manifest: BuildManifest, folder: Path) -> dict[str, int]:
    counts = dict(Counter(item.task for item in items))
    if manifest.tasks and counts != manifest.tasks:
        raise InputError(
            folder / "dataset.jsonl",
            f"items per task {counts} differ from the manifest's {manifest.tasks}",
        )
    return manifest.tasks or counts


def export_run(run: Path, to: ExportFormat, out: Path, license: str | None = None) -> ExportResult:
    """Write the build run `run` to the new folder `out` as Parquet or a `datasets` folder.

    The run is held (locked) while it is read, so that no review rewrites it meanwhile.
    """
    require("export", "gramagents export")
    with Run.existing(run.parent if run.is_file() else run, kind="build") as held:
        manifest = held.found
        assert isinstance(manifest, BuildManifest)
        if manifest.status != "complete":
            raise InputError(
                held.file(MANIFEST), "the build did not finish; resume it first", field="status"
            )
        return _export(held.path, manifest, to, out, license)


def _export(
    folder: Path, manifest: BuildManifest, to: ExportFormat, out: Path, license: str | None
) -> ExportResult:
    if out.is_symlink():
        raise InputError(
            out, f"is a symbolic link (to {os.readlink(out)}); name a new folder itself"
        )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(out, "already exists; name a new folder")
    dataset = read_items(folder).load()
    counts = _check_counts(dataset.items, manifest, folder)
    licence = license or manifest.license or "unknown"
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = temporary_folder(out.parent, f".{out.name}.", ".tmp")
    try:
        columns = {name: [item_row(i)[name] for i in dataset.items] for name in COLUMNS}
        if to == "parquet":
            _write_parquet(columns, staging)
        else:
            _write_hf(columns, staging, manifest, licence)
        files = {
            p.relative_to(staging).as_posix(): _sha256(p)
            for p in sorted(staging.rglob("*"))
            if p.is_file() and p.suffix in (".parquet", ".arrow")
        }
        record = {
            "export": {"format": to, "split": SPLIT, "columns": list(COLUMNS), "files": files},
            "dataset_sha256": dataset.digest,
            "build": manifest.model_dump(mode="json"),
        }
        (staging / EXPORT_INFO).write_text(
            json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
        facts = CardFacts(manifest, dataset.items, counts, files, dataset.digest, to, licence)
        card = dataset_card(facts)
        (staging / "README.md").write_text(card, encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty, checked above
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExportResult(folder=out, items=len(dataset.items), files=files, license=licence)


def _write_parquet(columns: dict[str, list[str]], folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({name: pa.array(values, pa.string()) for name, values in columns.items()})
    path = folder / PARQUET_FILE
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)


def _write_hf(
    columns: dict[str, list[str]], folder: Path, manifest: BuildManifest, licence: str
) -> None:
    from datasets import Dataset, DatasetInfo, Features, Split, Value

    info = DatasetInfo(
        description=card_title(manifest),
        license=licence,
        features=Features({name: Value("string") for name in columns}),
    )
    data = Dataset.from_dict(columns, info=info, split=Split.TEST)
    data.save_to_disk(str(folder))


def _sha256(path: Path) -> str:
    import hashlib

    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def card_title(manifest: BuildManifest) -> str:
    """The dataset's title: its recipe's benchmark, and the build when its name adds to that."""
    recipe = manifest.recipe or "gramagents"
    title = f"{recipe} benchmark"
    if manifest.run_id and manifest.run_id != recipe:
        title += f" ({manifest.run_id})"
    return title


@dataclass(frozen=True)
class CardFacts:
    """What the dataset card states, gathered by the export."""

    manifest: BuildManifest
    items: list[Item]
    counts: dict[str, int]
    """Items per task."""
    files: dict[str, str]
    """Data file (relative to the folder) to its sha256."""
    digest: str
    """sha256 of the build's `dataset.jsonl`."""
    to: ExportFormat
    licence: str


def _front_matter(card: CardFacts) -> dict[str, Any]:
    languages = sorted(
        {str(i.meta["language"]) for i in card.items if isinstance(i.meta.get("language"), str)}
    )
    front: dict[str, Any] = {
        "license": card.licence,
        "pretty_name": card_title(card.manifest),
        "tags": ["gramagents", "grammar", "evaluation"],
        "size_categories": [_size_category(len(card.items))],
    }
    if languages:
        front["language"] = languages
    if card.to == "parquet":
        front["configs"] = [
            {
                "config_name": "default",
                "data_files": [{"split": SPLIT, "path": f"data/{SPLIT}-*.parquet"}],
            }
        ]
    return front


_COLUMNS_SECTION = [
    "## Columns",
    "",
    "| column | holds |",
    "| --- | --- |",
    "| `id` | the item's id, unique in the dataset |",
    "| `task` | the task (bank) the item belongs to |",
    "| `template` | the prompt template the item is rendered with (gramagents `prompts/`) |",
    "| `vars` | JSON object: the template's variables |",
    "| `answer` | JSON: the gold answer (`null` where there is none) |",
    "| `meta` | JSON object: grammar point, category, level, language, provenance |",
    "",
]
_USE_SECTION = [
    "## Use",
    "",
    "```bash",
    "gramagents eval THIS_FOLDER --model SPEC",
    "```",
    "",
    "`gramagents.json` beside this card holds the build's whole manifest.",
    "",
]


def dataset_card(card: CardFacts) -> str:
    """The folder's README.md: front matter the Hub reads, then what a reader needs to know."""
    front = yaml.safe_dump(_front_matter(card), allow_unicode=True, sort_keys=False)
    lines = [
        f"---\n{front}---",
        "",
        f"# {md_text(card_title(card.manifest))}",
        "",
        *_origin(card),
        *_stages(card.manifest),
        *_COLUMNS_SECTION,
        *_hashes(card),
        *_licence(card.licence),
        *_USE_SECTION,
    ]
    return "\n".join(lines)


def _origin(card: CardFacts) -> list[str]:
    """How the build was made, and its items per task."""
    manifest, counts = card.manifest, card.counts
    source = manifest.source or {}
    return [
        f"Built by gramagents with the {code_span(manifest.recipe)} recipe from "
        f"{code_span(Path(str(source.get('path', '?'))).name)}"
        + (f" ({md_text(source['points'])} grammar points)" if "points" in source else "")
        + f", agents {md_text(manifest.agents or 'off')}, seed {manifest.seed}, finished "
        f"{md_text(manifest.finished or manifest.started)}. {len(card.items)} items, one "
        f"`{SPLIT}` split.",
        "",
        "## Items per task",
        "",
        "| task | items |",
        "| --- | ---: |",
        *(f"| {md_cell(task)} | {n} |" for task, n in counts.items()),
        f"| total | {sum(counts.values())} |",
        "",
    ]


def _hashes(card: CardFacts) -> list[str]:
    hashes = card.manifest.hashes
    return [
        "## Hashes (sha256)",
        "",
        "| what | sha256 |",
        "| --- | --- |",
        *(f"| {_code_cell(name)} | {_code_cell(sha)} |" for name, sha in card.files.items()),
        f"| `dataset.jsonl` of the build | `{card.digest}` |",
        *(
            f"| {md_cell(name)} | {_code_cell(sha)} |"
            for name, sha in hashes.items()
            if name != "dataset"
        ),
        "",
    ]


def _code_cell(value: object) -> str:
    """Inline code in a table cell: a `|` inside it would end the cell."""
    return code_span(value).replace("|", "\\|")


def _licence(licence: str) -> list[str]:
    return [
        "## Licence",
        "",
        f"{code_span(licence)}."
        + (
            " The items derive from the grammar source; give its licence with "
            "`gramagents export ... --license ID` before sharing."
            if licence == "unknown"
            else ""
        ),
        "",
    ]


def _stages(manifest: BuildManifest) -> list[str]:
    if not manifest.stages:
        return []
    rows = [
        f"| {md_cell(stage)} | {md_cell(', '.join(f'{k} {v}' for k, v in outcome.items()))} |"
        for stage, outcome in manifest.stages.items()
    ]
    return ["## How the items were made", "", "| stage | counts |", "| --- | --- |", *rows, ""]
