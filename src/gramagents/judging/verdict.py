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
