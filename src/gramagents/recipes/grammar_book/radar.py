"""Figure 3 of the paper: each model's four task accuracies as a radar, its translation as a ring.

The paper normalises every metric to 0-1 and draws CometScore as a red ring. Here the ring is
COMET when the report computed it (`comet.py`), and otherwise corpus chrF++ over every
translation set (MIXED, the first direction) divided by 100, which the chart says. The run
viewer shows the chart (its Charts card, from the run's summary, so chrF++); the report
renders it to `grammar-book/radar.svg`.
"""

from __future__ import annotations

from ...api import Figure, RunManifest, Summary, report_chart

TASKS = (("GB-TASK1", "Task 1"), ("GB-TASK2", "Task 2"), ("GB-TASK3", "Task 3"),
         ("GB-TASK4", "Task 4"))  # fmt: skip
TRANSLATE = "GB-TRANSLATE"
TITLE = "Task accuracies per model, translation as the ring (Figure 3 layout)"


def radar(
    models: list[str],
    accuracy: dict[tuple[str, str], float],
    rings: dict[str, float],
    ring_label: str,
) -> Figure | None:
    """The radar of the models that have some task accuracy (None when none has)."""
    from ...api import radar_chart

    axes = [name for task, name in TASKS if any((m, task) in accuracy for m in models)]
    shown = [m for m in models if any((m, t) in accuracy for t, _ in TASKS)]
    if not axes or not shown:
        return None
    values = {m: {name: accuracy.get((m, task)) for task, name in TASKS if name in axes}
              for m in shown}  # fmt: skip
    chart = radar_chart(values, axes, {m: r for m, r in rings.items() if m in shown}, ring_label)
    caption = (
        "Each model's accuracy on the four probing tasks (base setting, mean over seeds) on "
        f"the spokes, 0 at the centre and 1 at the outer ring; the red dashed ring is its "
        f"translation score ({ring_label})."
    )
    return Figure(TITLE, chart, caption)


def viewer_radar(manifest: RunManifest, summary: Summary) -> list[Figure]:
    """Figure 3 for the run viewer, from the run's summary (chrF++ / 100 as the ring)."""
    accuracy = {
        (m, t): a.scores["acc"]
        for (m, t), a in summary.aggregates.items()
        if t in dict(TASKS) and "acc" in a.scores
    }
    rings = {
        m: a.scores["chrf++"] / 100.0
        for (m, t), a in summary.aggregates.items()
        if t == TRANSLATE and "chrf++" in a.scores
    }
    figure = radar(list(manifest.models), accuracy, rings, "chrF++ / 100")
    return [] if figure is None else [figure]


report_chart("grammar-book-radar", viewer_radar)
