"""A jury of judges: how their totals make one score, and their verdicts as runs record them.

Every judged answer is judged by each judge of the jury (`--judge-model`, given several
times). A judge that gives no total for an answer (its reply stayed invalid, or it could not
be reached while others were) is left out of that answer's aggregate and recorded as left out.
The aggregate (`--jury`):

- `median` (the default): the middle total, the mean of the two middle ones for an even
  count; one judge far off moves it least;
- `mean`: the mean of the totals (Verga et al. 2024 pool a jury's numeric scores so);
- `majority`: the total most judges gave, each rounded to a whole point; a tie goes to the
  tied value nearest the median of all totals, then to the lower.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULES = ("median", "mean", "majority")
"""How a jury's totals make one score."""
DEFAULT_RULE = "median"


def aggregate(totals: Sequence[float], rule: str = DEFAULT_RULE) -> float:
    """One score from the judges' totals by `rule` (see the module docstring).

    Raises:
        ValueError: No totals, or an unknown rule.
    """
    if not totals:
        raise ValueError("a jury needs at least one total to aggregate")
    if rule == "median":
        return float(statistics.median(totals))
    if rule == "mean":
        return float(statistics.fmean(totals))
    if rule == "majority":
        return _majority(totals)
    raise ValueError(f"unknown jury rule '{rule}' (rules: {', '.join(RULES)})")


def _majority(totals: Sequence[float]) -> float:
    counts = Counter(math.floor(t + 0.5) for t in totals)
    most = max(counts.values())
    tied = sorted(value for value, n in counts.items() if n == most)
    middle = statistics.median(totals)
    return float(min(tied, key=lambda value: (abs(value - middle), value)))


def aggregate_dimensions(
    dimensions: Sequence[Mapping[str, float]], rule: str = DEFAULT_RULE
) -> dict[str, float]:
    """Each dimension's aggregate over the judges (they need not sum to the total's)."""
    names = list(dict.fromkeys(name for d in dimensions for name in d))
    return {
        name: aggregate([d[name] for d in dimensions if name in d], rule)
        for name in names
        if any(name in d for d in dimensions)
    }


# --- what runs record -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedVerdict:
    """One judge's verdict on one answer, as a score line records it."""

    judge: str
    total: float | None
    """None: the judge gave no total (`error` says why)."""
    scale: tuple[float, float]
    error: str | None = None
    unreachable: bool = False

    @property
    def share(self) -> float | None:
        """The total as a share of the scale, 0 to 1."""
        lo, hi = self.scale
        return None if self.total is None or hi <= lo else (self.total - lo) / (hi - lo)


def recorded_verdicts(details: Mapping[str, Any]) -> list[RecordedVerdict]:
    """Every judge's verdict in a score line's `details.judge` (a jury's, or one judge's)."""
    scale = _scale(details.get("scale"))
    entries = details.get("verdicts")
    if not isinstance(entries, list):
        entries = [details]  # a run judged by one judge records its verdict alone
    verdicts = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not entry.get("judge"):
            continue
        total = entry.get("total")
        verdicts.append(
            RecordedVerdict(
                judge=str(entry["judge"]),
                total=float(total) if isinstance(total, int | float) else None,
                scale=_scale(entry.get("scale")) if entry.get("scale") else scale,
                error=entry.get("error"),
                unreachable=bool(entry.get("unreachable")),
            )
        )
    return verdicts


def _scale(value: Any) -> tuple[float, float]:
    if isinstance(value, list | tuple) and len(value) == 2:
        return float(value[0]), float(value[1])
    return 0.0, 100.0


def judged_records(scores: Iterator[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The score lines of judged answers (those that carry `details.judge`)."""
    for record in scores:
        details = record.get("details")
        if isinstance(details, Mapping) and isinstance(details.get("judge"), Mapping):
            yield record
