"""gramagents: LLM agents build grammar benchmarks; one workflow evaluates any model on them.

From Python, the command line's jobs are functions with its options as keyword arguments:

    import gramagents

    built = gramagents.build("cpg", "examples/cpg/grammar-points.jsonl", agents=False)
    run = gramagents.evaluate(built.path, models=["smollm2"], limit=5)
    run.summary       # rows: task, model, metric, score, n, invalid_rate
    run.to_pandas()   # the same as a DataFrame (the `pandas` extra)

`abuild`, `aevaluate` and `aprofile` are the same as coroutines; `open_run` reads a run
folder back. Importing this package imports nothing else: each name is loaded the first
time it is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

__version__ = "0.1.0"

EXPORTS: dict[str, str] = {
    "build": "gramagents.jobs:build",
    "abuild": "gramagents.jobs:abuild",
    "evaluate": "gramagents.jobs:evaluate",
    "aevaluate": "gramagents.jobs:aevaluate",
    "profile": "gramagents.jobs:profile",
    "aprofile": "gramagents.jobs:aprofile",
    "open_run": "gramagents.results:open_run",
    "BuildResult": "gramagents.results:BuildResult",
    "EvalResult": "gramagents.results:EvalResult",
    "ProfileResult": "gramagents.results:ProfileResult",
    "RunResult": "gramagents.results:RunResult",
    "BankRow": "gramagents.results:BankRow",
    "SummaryRow": "gramagents.records:SummaryRow",
    "ProgressSink": "gramagents.progress:ProgressSink",
    "GramagentsError": "gramagents.errors:GramagentsError",
    "InputError": "gramagents.errors:InputError",
    "SpecError": "gramagents.errors:SpecError",
    "RunError": "gramagents.errors:RunError",
    "BackendUnavailable": "gramagents.errors:BackendUnavailable",
    "MissingDependency": "gramagents.errors:MissingDependency",
    "MissingExtra": "gramagents.errors:MissingExtra",
}
"""Each public name, as `module:attribute` where it lives."""

__all__ = ["__version__", *EXPORTS]

if TYPE_CHECKING:  # the same names, for type checkers, editors and the API reference
    from .errors import (
        BackendUnavailable,
        GramagentsError,
        InputError,
        MissingDependency,
        MissingExtra,
        RunError,
        SpecError,
    )
    from .jobs import abuild, aevaluate, aprofile, build, evaluate, profile
    from .progress import ProgressSink
    from .records import SummaryRow
    from .results import (
        BankRow,
        BuildResult,
        EvalResult,
        ProfileResult,
        RunResult,
        open_run,
    )


__getattr__, __dir__ = lazy_exports(__name__, globals(), EXPORTS)
