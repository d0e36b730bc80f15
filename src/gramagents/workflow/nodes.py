"""The node kinds a recipe composes into the build graph, and what they see and return.

A build is a reader, then agent and filter nodes in the recipe's order, then a bank builder:

- the *reader* (`sources.SOURCES`) turns `--source` into records (typed pydantic models with
  an `id`) and read-only context (e.g. the grammar points);
- an *agent* node (`agents.base.AgentSpec`) fans one typed agent call out per planned task;
- a *filter* node (`FilterSpec`, registered here) runs once over the whole set: deduplicate,
  validate, sample, route, calibrate, flag anomalies;
- the *builder* (`tasks.registry.BankBuilderSpec`) assembles the banks.

Every node reports its counts (kept, removed, flagged, ...), which the manifest's `stages`
records under the node's name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from ..plugins import Registry
from ..records import GrammarPoint, Instance

R = TypeVar("R", bound=BaseModel)


class NoOptions(BaseModel):
    """A node without options of its own."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class BuildView:
    """What a node sees of the build so far."""

    records: dict[str, BaseModel]
    """The records by id, in the order they were made (removed ones are gone)."""
    context: dict[str, Any] = field(default_factory=dict)
    """Read-only facts the reader found (e.g. `points`: grammar points by id)."""
    flags: dict[str, list[str]] = field(default_factory=dict)
    """Record id to the reasons it goes to human review."""

    def of_type(self, kind: type[R]) -> list[R]:
        """The records of one type, in order."""
        return [r for r in self.records.values() if isinstance(r, kind)]


@dataclass(slots=True)
class BuildFailure:
    """Something a build could not make or keep: where, what, and why.

    Written to the run's `failures.jsonl` as `stage`, `agent` (for an agent's call), the
    fields naming what failed, `reason`, then the details (`as_json`).
    """

    stage: str
    """The stage (graph node, or the reader) it failed in."""
    reason: str | None
    """Why (None when the fields say it their own way)."""
    agent: str | None = None
    """The agent whose call failed, for an agent's failure."""
    subject: dict[str, Any] = field(default_factory=dict)
    """What failed (e.g. a record's `id`, or the task's records by id)."""
    details: dict[str, Any] = field(default_factory=dict)
    """What else the record says."""

    @classmethod
    def of(cls, stage: str, fields: dict[str, Any]) -> BuildFailure:
        """A failure a node or reader described as fields (a `stage` among them wins).

        The fields before `reason` name what failed, those after it are details.
        """
        keys = [k for k in fields if k != "stage"]
        reason = fields.get("reason")
        cut = keys.index("reason") if "reason" in keys else len(keys)
        after = cut + 1 if reason is not None else cut  # a null reason stays a detail
        return cls(
            stage=fields.get("stage", stage),
            reason=reason,
            subject={k: fields[k] for k in keys[:cut]},
            details={k: fields[k] for k in keys[after:]},
        )

    def as_json(self) -> dict[str, Any]:
        """The line `failures.jsonl` holds."""
        line: dict[str, Any] = {"stage": self.stage}
        if self.agent is not None:
            line["agent"] = self.agent
        line.update(self.subject)
        if self.reason is not None:
            line["reason"] = self.reason
        line.update(self.details)
        return line


@dataclass
class NodeUpdate:
    """What a node changed: records, flags, failures, and its own counts."""

    records: list[BaseModel] = field(default_factory=list)
    """New or changed records (a changed record keeps its place)."""
    removed: list[str] = field(default_factory=list)
    """Ids of records that leave the build."""
    flags: dict[str, list[str]] = field(default_factory=dict)
    """Reasons to add to records' review flags."""
    counts: dict[str, int] = field(default_factory=dict)
    """This node's tally (e.g. `{"before": 42, "kept": 41, "removed": 1}`)."""
    failures: list[dict[str, Any]] = field(default_factory=list)
    """What could not be made or kept, each with a `reason` (written to `failures.jsonl`)."""

    def state(self, stage: str) -> dict[str, Any]:
        """As an update of the build graph's state."""
        update: dict[str, Any] = {}
        changes: dict[str, BaseModel | None] = {_id(r): r for r in self.records}
        changes.update(dict.fromkeys(self.removed))
        if changes:
            update["records"] = changes
        if self.flags:
            update["flags"] = self.flags
        if self.counts:
            update["tallies"] = {stage: self.counts}
        if self.failures:
            update["failures"] = [BuildFailure.of(stage, f) for f in self.failures]
        return update


def _id(record: BaseModel) -> str:
    return str(record.id)  # type: ignore[attr-defined]


class NodeEnv:
    """What a filter may use besides the records: switches, seed, embeddings and models."""

    def __init__(
        self,
        agents_on: bool,
        seed: int,
        embed: Callable[[list[str], str], Any],
        models: dict[str, Any] | None = None,
    ) -> None:
        self.agents_on = agents_on
        self.seed = seed
        self.embed = embed
        self._models = models or {}

    def model(self, spec: str) -> Any:
        """The opened model for `spec` (one the filter's `models` named)."""
        return self._models[spec]


FilterFn = Callable[[BuildView, Any, NodeEnv], Awaitable[NodeUpdate]]


@dataclass(frozen=True)
class FilterSpec:
    """A node that runs once over the whole set of records."""

    name: str
    run: FilterFn
    options: type[BaseModel] = NoOptions
    description: str = ""
    models: Callable[[Any], list[str]] | None = None
    """Model specs the filter asks (opened and checked before the run starts) when agents
    are on; none when they are off."""


FILTERS: Registry[FilterSpec] = Registry("filter")


def filter_node(spec: FilterSpec) -> FilterSpec:
    """Register a filter under the name recipes use."""
    return FILTERS.register(spec.name, spec)


def merge_flags(left: dict[str, list[str]], right: dict[str, list[str]]) -> dict[str, list[str]]:
    """Add reasons to records' flags."""
    merged = dict(left)
    for key, reasons in right.items():
        merged[key] = [*merged.get(key, []), *reasons]
    return merged


def merge_records(
    left: dict[str, BaseModel], right: dict[str, BaseModel | None]
) -> dict[str, BaseModel]:
    """Changed records replace earlier versions in place; new ones append; None removes."""
    merged = dict(left)
    for key, value in right.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def merge_tallies(
    left: dict[str, dict[str, int]], right: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    """Sum counts per stage."""
    merged = {stage: dict(counts) for stage, counts in left.items()}
    for stage, counts in right.items():
        bucket = merged.setdefault(stage, {})
        for outcome, n in counts.items():
            bucket[outcome] = bucket.get(outcome, 0) + n
    return merged


def texts(records: Iterable[BaseModel], fields: list[str]) -> list[str]:
    """Each record's `fields` joined into one text (dicts as `keyvalue`, lists joined)."""
    out = []
    for record in records:
        parts = []
        for name in fields:
            value = getattr(record, name, None)
            if isinstance(value, dict):
                parts.append(" ".join(f"{k}{v}" for k, v in value.items()))
            elif isinstance(value, list | tuple):
                parts.append(" ".join(str(v) for v in value))
            else:
                parts.append("" if value is None else str(value))
        out.append(" ".join(parts))
    return out


@dataclass(frozen=True)
class RecordFile:
    """The run-folder file records of one type are written to at the end of a build."""

    kind: type[BaseModel]
    name: str


RECORD_FILES: Registry[RecordFile] = Registry("record file")
"""Record files by the record type's dotted name (records of other types go to
`records.jsonl`)."""


def record_file(kind: type[BaseModel], name: str) -> None:
    """Name the build's file for records (or context entries) of type `kind`."""
    RECORD_FILES.register(f"{kind.__module__}.{kind.__qualname__}", RecordFile(kind, name))


def file_of(record: BaseModel) -> str:
    """The file a record is written to (the first type registered that it is an instance of)."""
    for entry in RECORD_FILES.loaded().values():
        if isinstance(record, entry.kind):
            return entry.name
    return "records.jsonl"


record_file(Instance, "instances.jsonl")
record_file(GrammarPoint, "points.jsonl")


for _name in ("minhash-dedup", "sample", "label-check"):
    FILTERS.announce(_name, "gramagents.workflow.filters")
