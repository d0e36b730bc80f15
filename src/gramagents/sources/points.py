"""Grammar points as a build source: one instance per example, confuser and minimal pair.

Shared by the recipes whose source is a list of grammar points (a grammar-point table, a
grammar-item list): the points become the build's context, their sentences its records.
"""

from __future__ import annotations

from ..records import GrammarPoint, Instance, Provenance
from . import ReadOptions, SourceData


def source_instances(points: list[GrammarPoint]) -> list[Instance]:
    """One instance per example, confuser and minimal pair of the points, in order."""
    instances: list[Instance] = []
    for point in points:
        for kind, tag, sentences in (
            ("example", "ex", point.examples),
            ("confuser", "cf", point.confusers),
        ):
            for index, sentence in enumerate(sentences):
                instances.append(
                    Instance(
                        id=f"{point.id}/{tag}/{index}",
                        point_id=point.id,
                        text=sentence,
                        kind=kind,  # type: ignore[arg-type]
                        provenance=Provenance(source=point.source),
                    )
                )
        for index, pair in enumerate(point.pairs):
            instances.append(
                Instance(
                    id=f"{point.id}/pair/{index}",
                    point_id=point.id,
                    text=pair.ungrammatical,
                    kind="pair",
                    annotations={"correction": pair.correction, "alternatives": pair.alternatives},
                    provenance=Provenance(source=point.source),
                )
            )
    return instances


def point_source(points: list[GrammarPoint], options: ReadOptions) -> SourceData:
    """The build source of a list of grammar points (the first `limit` of them)."""
    if options.limit is not None:
        points = points[: options.limit]
    instances = source_instances(points)
    return SourceData(
        records=list(instances),
        context={"points": {p.id: p for p in points}},
        stats={"points": len(points), "instances": len(instances)},
        info={"points": len(points)},
    )
