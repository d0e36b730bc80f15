"""A 739-point table with 9 sentences each: the paper's bank sizes."""

import asyncio
from collections import Counter

import pytest

from gramagents.recipes.cpg.table import read_grammar_table
from gramagents.testing.tables import write_synthetic_table
from gramagents.workflow.build import BuildOptions, run_build

pytestmark = pytest.mark.slow


def test_a_739_by_9_table_gives_the_papers_bank_sizes(tmp_path):
    table = write_synthetic_table(tmp_path / "table.jsonl", points=739, sentences=9)
    points = read_grammar_table(table)
    result = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=tmp_path / "run"))
    )
    counts = Counter(i.task for i in result.items)
    assert counts["SINGLE-T"] == counts["SIM-GRA"] == 6651
    assert counts["BATCH-T"] == 739
    for item in (i for i in result.items if i.task == "SIM-GRA"):
        assert len({o["text"] for o in item.meta["options"]}) == 5
    size = Counter(p.category for p in points)
    pairs = sum(n * (n - 1) for n in size.values())  # every point against its group's others
    assert counts["SINGLE-F"] == counts["BATCH-F"] == pairs
    assert counts["CAT-GRA"] == 9 * sum(n for n in size.values() if n >= 2)
    assert min(size.values()) == 1  # singleton categories exist, and make no CAT-GRA question
    assert {i.meta["category"] for i in result.items if i.task == "CAT-GRA"} == {
        c for c, n in size.items() if n >= 2
    }
    with_confusers = {p.id for p in points if len(p.confusers) >= 10}
    assert {i.meta["point"] for i in result.items if i.task == "CON-INS-F10"} == with_confusers
    assert {i.meta["point"] for i in result.items if i.task == "CON-INS-T5F5"} == with_confusers
