"""The paper's own counts, shown beside a build's (`../shared/seeds/002_*`, Tables 1 and 4).

Table 4 counts every question the paper's patterns allow on the Penn Treebank; Table 1 the
questions its balanced sampling drew (k = 5 per type, point and answer category). MVP's
True/False questions are those of GS, SC, DO and IO (‡), counted apart from the totals.
"""

from __future__ import annotations

TABLE_1 = {
    "TF": {"GS": 130, "SC": 130, "DO": 150, "IO": 30, "MVP": 440, "ADJ": 185, "ADV": 165,
           "CO": 165, "PPA": 110},
    "MC": {"GS": 105, "SC": 85, "DO": 145, "IO": 20, "MVP": 170, "ADJ": 165, "ADV": 125,
           "CO": 160, "PPA": 100},
    "FITB": {"GS": 105, "SC": 85, "DO": 145, "IO": 20, "MVP": 170, "ADJ": 135, "ADV": 115,
             "CO": 155, "PPA": 100},
}  # fmt: skip
TABLE_4 = {
    "TF": {"GS": 426_832, "SC": 59_984, "DO": 261_320, "IO": 2_716, "MVP": 750_852,
           "ADJ": 587_968, "ADV": 385_406, "CO": 319_492, "PPA": 375_576},
    "MC": {"GS": 106_708, "SC": 14_996, "DO": 65_330, "IO": 679, "MVP": 129_669,
           "ADJ": 67_865, "ADV": 77_439, "CO": 33_405, "PPA": 93_894},
    "FITB": {"GS": 106_708, "SC": 14_996, "DO": 65_330, "IO": 679, "MVP": 129_669,
             "ADJ": 58_401, "ADV": 40_268, "CO": 19_594, "PPA": 93_894},
}  # fmt: skip
BORROWED = {"TF": {"MVP"}}
"""Counts left out of a type's total when shares are taken (Table 1 and 4, ‡)."""


def shares(counts: dict[str, int], kind: str) -> dict[str, float]:
    """Each point's share of a question type's total (MVP's borrowed True/False apart)."""
    total = sum(n for p, n in counts.items() if p not in BORROWED.get(kind, set()))
    return {p: n / total for p, n in counts.items()} if total else {}
