"""The rubric judge's verdict on one answer, as the eval graph carries and records it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Verdict:
    """What the judge said of one answer, under which rubric; `total` is None without one.

    Recorded in the answer's score line as `details.judge` (`as_details`).
    """

    rubric: str
    rubric_version: str
    rubric_hash: str
    scale: tuple[float, float]
    judge: str
    """The judge model's label."""
    dimensions: dict[str, float] | None = None
    """Points per rubric dimension (None when there is no judgment)."""
    total: float | None = None
    reason: str = ""
    error: str | None = None
    """Why there is no judgment, when there is none."""
    unreachable: bool = False
    """The judge could not be reached: the answer is judged again when the run resumes."""
    interrupted: bool = False
    """The judge was not asked to the end: the command was stopped first."""

    @property
    def judged(self) -> bool:
        """Whether the judge gave a total."""
        return self.total is not None

    def as_details(self) -> dict[str, Any]:
        """The verdict as the score line's `details.judge` records it."""
        recorded: dict[str, Any] = {
            "rubric": self.rubric,
            "rubric_version": self.rubric_version,
            "rubric_hash": self.rubric_hash,
            "scale": list(self.scale),
            "judge": self.judge,
        }
        if self.total is None:
            recorded["error"] = self.error
            recorded["unreachable"] = self.unreachable
        else:
            recorded["dimensions"] = self.dimensions
            recorded["total"] = self.total
            recorded["reason"] = self.reason
        return recorded


@dataclass(slots=True)
class JuryVerdict:
    """Every judge's verdict on one answer and their aggregate (judging/jury.py).

    A judge without a total is left out of the aggregate. With no total from any judge, the
    answer waits for the resume when some judge could not be reached (`unreachable`), and is
    invalid otherwise. One judge's record is its verdict as it was before juries
    (`as_details`).
    """

    verdicts: list[Verdict]
    rule: str = "median"

    @property
    def scale(self) -> tuple[float, float]:
        """The rubric's scale (every judge grades with the same rubric)."""
        return self.verdicts[0].scale

    @property
    def total(self) -> float | None:
        """The aggregate of the judges' totals (None: no judge gave one)."""
        from .jury import aggregate

        totals = [v.total for v in self.verdicts if v.total is not None]
        return aggregate(totals, self.rule) if totals else None

    @property
    def unreachable(self) -> bool:
        """No judge gave a total and some could not be reached: judged again on resume."""
        return self.total is None and any(v.unreachable for v in self.verdicts)

    @property
    def interrupted(self) -> bool:
        """A stop left some judge's verdict unasked.

        The answer waits for the resume, which asks that judge (the others' verdicts come
        from the cache).
        """
        return any(v.interrupted for v in self.verdicts)

    def as_details(self) -> dict[str, Any]:
        """The verdicts as the score line's `details.judge` records them.

        A jury's: the rubric, the aggregate total and dimensions (each dimension aggregated
        on its own, so they need not sum to the total), a reason naming each judge's total,
        `jury` (the rule and the judges), `verdicts` (each judge's, as one judge's record is,
        less the rubric) and `left_out` (the judges without a total).
        """
        if len(self.verdicts) == 1:
            return self.verdicts[0].as_details()
        from .jury import aggregate_dimensions

        first, total = self.verdicts[0], self.total
        judged = [v for v in self.verdicts if v.total is not None]
        recorded = {
            **{k: v for k, v in first.as_details().items() if k.startswith(("rubric", "scale"))},
            "judge": f"jury ({self.rule}): " + ", ".join(v.judge for v in self.verdicts),
            "jury": {"rule": self.rule, "judges": [v.judge for v in self.verdicts]},
        }
        if total is None:
            recorded["error"] = "no judge gave a total: " + "; ".join(
                f"{v.judge}: {v.error}" for v in self.verdicts
            )
            recorded["unreachable"] = self.unreachable
        else:
            recorded["dimensions"] = aggregate_dimensions(
                [v.dimensions or {} for v in judged], self.rule
            )
            recorded["total"] = total
            recorded["reason"] = f"{self.rule} of {len(judged)} judges' totals: " + ", ".join(
                f"{v.judge} {v.total:g}" for v in judged
            )
        recorded["verdicts"] = [
            {k: x for k, x in v.as_details().items() if not k.startswith(("rubric", "scale"))}
            for v in self.verdicts
        ]
        recorded["left_out"] = [v.judge for v in self.verdicts if v.total is None]
        return recorded
