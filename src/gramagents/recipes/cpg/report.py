"""The report table of the CPG recipe: the paper's Table 3 layout."""

from __future__ import annotations

from ...report.layouts import Column, Layout

CPG_TABLE_3 = Layout(
    title="CPG-EVAL Table 3 layout",
    columns=(
        Column("SINGLE", "T", "SINGLE-T"),
        Column("SINGLE", "F", "SINGLE-F"),
        Column("BATCH", "T×9", "BATCH-T"),
        Column("BATCH", "F×9", "BATCH-F"),
        Column("SIM-GRA", "", "SIM-GRA"),
        Column("CAT-GRA", "", "CAT-GRA"),
        Column("CON-INS", "F×10", "CON-INS-F10"),
        Column("CON-INS", "T×5&F×5", "CON-INS-T5F5"),
    ),
    note="Accuracy at the sub-question level (a BATCH or CON-INS question counts each sentence).",
)
