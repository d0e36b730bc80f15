"""What `gramagents.build`, `evaluate` and `profile` return, and `open_run` reads back.

A result is a run folder seen from Python: its path, its typed manifest, its summary rows,
its per-item records streamed from the folder's JSONL files, and its report. It holds no
records in memory: `records()` reads them as they are asked for, so a run of a million
items is as cheap to open as one of ten. `to_pandas()` makes a DataFrame of the summary or
of the records when pandas is installed (the `pandas` extra).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .errors import MissingExtra, RunError
from .records import (
    BuildManifest,
    EvalManifest,
    Item,
    ProfileManifest,
    Record,
    ResponseRecord,
    ScoreRecord,
    SummaryRow,
)
from .runtime.rundir import iter_jsonl

if TYPE_CHECKING:
    import pandas

Table = Literal["summary", "records"]


class BankRow(Record):
    """A row of a build's summary: one task's bank."""

    task: str
    n: int
    """Items in the bank."""


@dataclass(frozen=True)
class RunResult:
    """A run folder: what every kind of result has."""

    path: Path
    """The run folder."""
    manifest: BuildManifest | EvalManifest | ProfileManifest
    """The run's `manifest.json`, typed by its kind."""

    @property
    def report_path(self) -> Path:
        """The run's `report.md`."""
        return self.path / "report.md"

    @property
    def view_path(self) -> Path | None:
        """The run's viewer page, `report.html` (None where it was not written)."""
        page = self.path / "report.html"
        return page if page.is_file() else None

    @property
    def complete(self) -> bool:
        """Whether the run finished (`manifest.status` is `complete`)."""
        return self.manifest.status == "complete"

    @property
    def summary(self) -> list[Any]:
        """The run's summary rows."""
        raise NotImplementedError

    def records(self) -> Iterator[Record]:
        """The run's per-item records, read from its folder one at a time."""
        raise NotImplementedError

    def to_pandas(self, table: Table = "summary") -> pandas.DataFrame:
        """The summary rows (`table="summary"`) or the records (`"records"`) as a DataFrame.

        Raises:
            MissingExtra: pandas is not installed (`pip install 'gramagents[pandas]'`).
        """
        try:
            import pandas
        except ImportError:
            raise MissingExtra("to_pandas()", "pandas") from None
        if table == "summary":
            rows = [row.model_dump(mode="json") for row in self.summary]
            columns = list(self._summary_columns())
        elif table == "records":
            rows = [self._flat(record) for record in self.records()]
            columns = None
        else:
            raise ValueError(f"table must be 'summary' or 'records', not {table!r}")
        return pandas.DataFrame(rows, columns=columns)

    def _summary_columns(self) -> tuple[str, ...]:
        return tuple(SummaryRow.model_fields)

    def _flat(self, record: Record) -> dict[str, Any]:
        return record.model_dump(mode="json")


@dataclass(frozen=True)
class BuildResult(RunResult):
    """A build run: a dataset and what the build did."""

    manifest: BuildManifest
    """The build's manifest (its recipe, source, stages' counts, items per task)."""

    @property
    def dataset_path(self) -> Path:
        """The run's `dataset.jsonl`, what `evaluate` reads."""
        return self.path / "dataset.jsonl"

    @property
    def summary(self) -> list[BankRow]:
        """One row per task: the items of its bank."""
        return [BankRow(task=task, n=n) for task, n in self.manifest.tasks.items()]

    def records(self) -> Iterator[Item]:
        """The dataset's items, in file order."""
        for row in iter_jsonl(self.dataset_path):
            yield Item.model_validate(row)

    def _summary_columns(self) -> tuple[str, ...]:
        return tuple(BankRow.model_fields)

    def _flat(self, record: Record) -> dict[str, Any]:
        assert isinstance(record, Item)
        row = record.model_dump(mode="json", exclude={"prompt", "meta"})
        row["template"] = record.prompt.template
        return {**row, **{f"meta.{k}": v for k, v in record.meta.items()}}


@dataclass(frozen=True)
class EvalResult(RunResult):
    """An eval run: models' answers to a dataset, scored."""

    manifest: EvalManifest
    """The eval's manifest (models, dataset, counts, how it ended)."""

    @property
    def summary(self) -> list[SummaryRow]:
        """`summary.json`: one row per (model, task, metric), the headline metric first."""
        file = self.path / "summary.json"
        if not file.is_file():
            return []
        return [SummaryRow.model_validate(row) for row in json.loads(file.read_bytes())]

    def records(self, kind: Literal["scores", "responses"] = "scores") -> Iterator[Record]:
        """Each (model, item)'s score record (`scores.jsonl`), or each response (`responses`)."""
        if kind not in ("scores", "responses"):
            raise ValueError(f"kind must be 'scores' or 'responses', not {kind!r}")
        model = ScoreRecord if kind == "scores" else ResponseRecord
        for row in iter_jsonl(self.path / f"{kind}.jsonl"):
            yield model.model_validate(row)

    def _flat(self, record: Record) -> dict[str, Any]:
        return _flat_score(record)


@dataclass(frozen=True)
class ProfileResult(RunResult):
    """A profile: a suite's builds and evals, and the statistics over them."""

    manifest: ProfileManifest
    """The profile's manifest (suite, entries, how each eval ended)."""

    @property
    def data(self) -> dict[str, Any]:
        """`profile.json`: competences, weakest grammar points, paired comparisons."""
        file = self.path / "profile.json"
        return json.loads(file.read_bytes()) if file.is_file() else {}

    @property
    def summary(self) -> list[SummaryRow]:
        """One row per (model, competence, in `task`): its chance-corrected score."""
        rows = []
        for model, blocks in self.data.get("competences", {}).items():
            for competence, block in blocks.items():
                if block is None:
                    continue
                rows.append(
                    SummaryRow(
                        model=model,
                        task=competence,
                        n=block["n"],
                        metric="chance-corrected",
                        score=block["corrected"]["value"],
                        invalid_rate=block["invalid_rate"],
                    )
                )
        return rows

    def records(self, entry: str | None = None) -> Iterator[ScoreRecord]:
        """The score records of every entry's eval (or of `entry`'s), entry by entry."""
        for name, recorded in self.manifest.entries.items():
            if entry is not None and name != entry:
                continue
            if recorded.get("eval"):
                yield from open_run(self.path / recorded["eval"]).records()  # type: ignore[misc]

    def _flat(self, record: Record) -> dict[str, Any]:
        return _flat_score(record)


def _flat_score(record: Record) -> dict[str, Any]:
    """A score or response record as a table row: scores and meta as columns of their own."""
    row = record.model_dump(mode="json")
    for name in ("scores", "meta"):
        for key, value in (row.pop(name, None) or {}).items():
            row[f"{name}.{key}"] = value
    row.pop("details", None)
    return row


def open_run(path: str | Path) -> BuildResult | EvalResult | ProfileResult:
    """A finished (or stopped) run folder, read back as the result its command returned.

    Raises:
        RunError: The folder is not a run folder, or its manifest cannot be read.
    """
    from .runtime.run import read_manifest

    folder = Path(path)
    if not folder.is_dir():
        raise RunError(f"{folder}: not a run folder")
    manifest = read_manifest(folder)
    if manifest is None:
        raise RunError(f"{folder}: no manifest.json (is it a run folder?)")
    return result_of(folder, manifest)


def result_of(
    folder: Path, manifest: BuildManifest | EvalManifest | ProfileManifest
) -> BuildResult | EvalResult | ProfileResult:
    """The result type of `manifest`'s kind, for `folder`."""
    if isinstance(manifest, BuildManifest):
        return BuildResult(folder, manifest)
    if isinstance(manifest, EvalManifest):
        return EvalResult(folder, manifest)
    return ProfileResult(folder, manifest)
