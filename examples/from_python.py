"""The quick start from Python: build the CPG-EVAL example banks, evaluate the embedded model.

    python examples/from_python.py

The same jobs as `gramagents build cpg --source examples/cpg/grammar-points.jsonl --agents off`
and `gramagents eval RUN --limit 2`, run from Python; the summary is printed as a table.
"""

from pathlib import Path

import gramagents

EXAMPLE = Path(__file__).resolve().parent / "cpg" / "grammar-points.jsonl"

built = gramagents.build("cpg", EXAMPLE, "runs/python-build", agents=False)
print(f"built {built.manifest.counts.items} items: {built.dataset_path}")
run = gramagents.evaluate(built.path, ["smollm2"], "runs/python-eval", limit=2)
for row in run.summary:
    print(f"{row.task:14} {row.metric:10} {row.score:.3f}  invalid {row.invalid_rate:.2f}")
print(f"report: {run.report_path}")
