"""What recipes add to reports: one registry of report parts, each of one kind.

| kind | value | shown |
| --- | --- | --- |
| `paper-table` | a `Layout` | the paper's main table, in `report.md` and the viewer |
| `section` | `fn(manifest, summary) -> lines` | markdown in `report.md` and the viewer |
| `files` | `fn(folder, manifest, summary) -> lines` | the same, after writing files into the run |
| `chart` | `fn(manifest, summary) -> [Figure]` | the viewer's Charts card |
| `build-section` | `fn(manifest, folder) -> lines` | a build's `report.md` |

A part is keyed `kind/name`, so a recipe may use one name for a section and a chart. Each
kind keeps the name it had before as a view (`SECTIONS`, `FILE_SECTIONS`, `CHARTS`,
`BUILD_SECTIONS`, `LAYOUTS`), which registers, announces and lists parts of that kind only,
and resolves only those: a build's report imports no chart module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast, get_args

from ..plugins import Registry

PartKind = Literal["paper-table", "section", "files", "chart", "build-section"]
KINDS: tuple[PartKind, ...] = get_args(PartKind)
V = TypeVar("V")


@dataclass(frozen=True)
class ReportPart:
    """One thing a recipe adds to reports."""

    kind: PartKind
    value: Any
    """A `Layout` for a paper table, the function that makes the part for the other kinds."""


REPORT_PARTS: Registry[ReportPart] = Registry("report part")


def part_key(kind: PartKind, name: str) -> str:
    """The registry key of the part `name` of `kind`."""
    return f"{kind}/{name}"


class PartsOfKind(Generic[V]):
    """The report parts of one kind: a view of `REPORT_PARTS` that holds nothing itself."""

    def __init__(self, kind: PartKind) -> None:
        if kind not in KINDS:
            raise ValueError(f"no report part kind '{kind}' (kinds: {', '.join(KINDS)})")
        self.kind = kind
        self.registry = REPORT_PARTS

    def register(self, name: str, value: V) -> V:
        """Add `value` as the part `name` of this kind."""
        self.registry.register(part_key(self.kind, name), ReportPart(self.kind, value))
        return value

    def announce(self, name: str, module: str) -> None:
        """Say that importing `module` registers the part `name` of this kind."""
        self.registry.announce(part_key(self.kind, name), module)

    def get(self, name: str) -> V | None:
        """The part `name` of this kind, importing its module if need be."""
        part = self.registry.get(part_key(self.kind, name))
        return None if part is None else cast(V, part.value)

    def names(self) -> list[str]:
        """Names of this kind's parts, registered or announced, sorted."""
        prefix = part_key(self.kind, "")
        return [k.removeprefix(prefix) for k in self.registry.names() if k.startswith(prefix)]

    def all(self) -> dict[str, V]:
        """Every part of this kind, resolving the announced ones; in registration order."""
        for name in self.names():
            self.get(name)
        prefix = part_key(self.kind, "")
        return {
            key.removeprefix(prefix): cast(V, part.value)
            for key, part in self.registry.loaded().items()
            if part.kind == self.kind
        }

    def unregister(self, name: str) -> None:
        """Remove the part `name` of this kind (tests register throw-away parts)."""
        self.registry.unregister(part_key(self.kind, name))
