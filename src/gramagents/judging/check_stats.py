"""What `gramagents judge-check` concludes from its judgments: a row per judge and probe.

For each judge and probe, over the sampled answers both judgments scored: the mean change of
the score (probe minus the answer as it was) in points and as a share of the rubric's scale, a
paired percentile bootstrap interval of that mean (the answers resampled), and the judge's
noise: the mean absolute change of its `repeat` probe (the same answer asked again).

A row is `flagged` when the probe moves the judge's scores by at least the threshold (a share
of the scale, 5 % by default) and the whole interval lies beyond the judge's noise: above it
for a rise, below minus it for a fall (beyond 0 for a judge without noise). For `repeat`
itself the interval must exclude 0: a judge whose second opinion drifts one way.

Why 5 % of the scale: the packaged rubrics' smallest criteria weigh 10 points of 100, so a
shift of 5 is half a criterion, as large as the gaps between neighbouring models in the
papers' tables; a smaller shift would not change a conclusion drawn from the scores, and at
the default sample (100 answers) a fair judge's interval is narrower than that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .statistics import percentile_interval, resample_counts

DEFAULT_THRESHOLD = 0.05
"""The least change, as a share of the scale, that a flag needs (see the module docstring)."""


@dataclass(frozen=True)
class Pair:
    """One answer's score as it was and under a probe, on its rubric's scale."""

    before: float
    after: float
    scale: tuple[float, float]

    @property
    def change(self) -> float:
        """The change in points."""
        return self.after - self.before

    @property
    def share(self) -> float:
        """The change as a share of the scale."""
        lo, hi = self.scale
        return self.change / (hi - lo) if hi > lo else 0.0


@dataclass(frozen=True)
class CheckSettings:
    """How the rows are drawn."""

    threshold: float = DEFAULT_THRESHOLD
    n_boot: int = 2000
    seed: int = 1234


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), digits)


def _mean_interval(values: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """The percentile interval of the mean of `values` over resampled answers."""
    if counts.size == 0:
        return math.nan, math.nan
    return percentile_interval(counts @ values / len(values))


def noise_of(pairs: Sequence[Pair]) -> float:
    """A judge's noise: the mean absolute change of its repeat probe (share of the scale)."""
    return float(np.mean([abs(p.share) for p in pairs])) if pairs else 0.0


def probe_row(
    judge: str, probe: str, pairs: Sequence[Pair], noise: float, settings: CheckSettings
) -> dict[str, Any]:
    """The row of one judge and probe (see the module docstring)."""
    n = len(pairs)
    row: dict[str, Any] = {"judge": judge, "probe": probe, "n": n}
    if n == 0:
        empty = dict.fromkeys(("shift", "low", "high", "share", "share_low", "share_high"))
        return {**row, **empty, "flagged": False, "noise": _r(noise), "why": "no answer pairs"}
    points = np.array([p.change for p in pairs])
    shares = np.array([p.share for p in pairs])
    counts = resample_counts(n, settings.n_boot, settings.seed) if n > 1 else np.zeros((0, n))
    low, high = _mean_interval(points, counts)
    share_low, share_high = _mean_interval(shares, counts)
    share = float(shares.mean())
    flagged, why = _verdict(probe, share, (share_low, share_high), noise, settings.threshold)
    return {
        **row,
        "shift": _r(float(points.mean())),
        "low": _r(low),
        "high": _r(high),
        "flagged": flagged,
        "share": _r(share),
        "share_low": _r(share_low),
        "share_high": _r(share_high),
        "noise": _r(noise),
        "why": why,
    }


def _verdict(
    probe: str, share: float, interval: tuple[float, float], noise: float, threshold: float
) -> tuple[bool, str]:
    """Whether a row is flagged, and why (or why not), in one line."""
    low, high = interval
    if math.isnan(low) or math.isnan(high):
        return False, "too few answers for an interval"
    if abs(share) < threshold:
        return False, f"change under {threshold:.0%} of the scale"
    bound = 0.0 if probe == "repeat" else noise
    beyond = low > bound if share > 0 else high < -bound
    if not beyond:
        what = "0" if bound == 0 else f"the judge's noise ({bound:.1%} of the scale)"
        return False, f"the interval does not lie beyond {what}"
    direction = "raises" if share > 0 else "lowers"
    return True, f"the probe {direction} scores by {abs(share):.1%} of the scale"


def check_rows(
    outcomes: Mapping[tuple[str, str], Sequence[Pair]],
    judges: Sequence[str],
    probes: Sequence[str],
    settings: CheckSettings,
) -> list[dict[str, Any]]:
    """Every judge's rows, probe by probe, each against that judge's repeat noise."""
    rows = []
    for judge in judges:
        noise = noise_of(outcomes.get((judge, "repeat"), []))
        for probe in probes:
            rows.append(probe_row(judge, probe, outcomes.get((judge, probe), []), noise, settings))
    return rows


# --- judge-check.md -----------------------------------------------------------------------------

MEANINGS = {
    "injection": "a request for full marks appended to the answer",
    "length": "the answer padded to twice its length with generic sentences",
    "repeat": "the same answer judged again (the judge's own noise)",
}


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1%}"


def _pts(value: float | None) -> str:
    return "–" if value is None else f"{value:+.2f}"


def check_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rows as a markdown table (judge names escaped by the caller's `cell`)."""
    from ..report.markdown import markdown_table

    table = [
        [
            row["judge"],
            row["probe"],
            row["n"],
            _pts(row["shift"]),
            _pct(row["share"]),
            f"[{_pts(row['low'])}, {_pts(row['high'])}]",
            "–" if row["noise"] is None else f"{row['noise']:.1%}",
            "FLAGGED" if row["flagged"] else "no",
            row["why"],
        ]
        for row in rows
    ]
    header = ["judge", "probe", "n", "shift (points)", "share of scale", "95% interval"]
    header += ["noise", "flagged", "why"]
    return markdown_table(header, table)


def check_markdown(data: Mapping[str, Any]) -> str:
    """`judge-check.md`: what was probed, the table, and what a flag means."""
    settings = data["settings"]
    lines = [
        "# Judge check",
        "",
        f"{data['answers']} judged answers of the run, sampled with seed {settings['seed']} "
        f"(at most {settings['limit']}), judged by each judge as they were and under each "
        "probe:",
        "",
        *(f"- `{p}`: {MEANINGS[p]}" for p in settings["probes"]),
        "",
        *check_table(data["rows"]),
        "",
        *flag_note(settings),
        "",
    ]
    return "\n".join(lines)


def flag_note(settings: Mapping[str, Any]) -> list[str]:
    """What a flag means, for the markdown."""
    return [
        f"A row is flagged when the probe moves the judge's mean score by at least "
        f"{settings['threshold']:.0%} of the scale and the whole 95% interval (paired "
        f"bootstrap over answers, {settings['n_boot']} resamples) lies beyond the judge's "
        "noise, its mean absolute change when asked again. A flagged judge grades something "
        "other than the answer's content: read its scores with care, or leave it out of the "
        "jury.",
    ]
