"""`gramagents m2`: score an M2 hypothesis as `errant_compare` does (registered by the recipe).

A `GramagentsError` it raises is shown by the command line as its one `error:` line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...api import COMMANDS


def m2(
    hyp: Annotated[Path, typer.Option("--hyp", help="Hypothesis M2 file.")],
    ref: Annotated[Path, typer.Option("--ref", help="Reference M2 file.")],
    single_ref: Annotated[
        bool,
        typer.Option(
            help="Score against annotator 0 only (the Step 2 reference: targeted recall)."
        ),
    ] = False,
    beta: Annotated[float, typer.Option(help="F-score beta.")] = 0.5,
) -> None:
    """Score an M2 hypothesis against M2 references, as `errant_compare` does."""
    from ...api import InputError
    from .m2 import only_annotators, prf, read_m2_file, score_corpus

    hypotheses = read_m2_file(hyp)
    references = read_m2_file(ref)
    if len(hypotheses) != len(references):
        raise InputError(hyp, f"{len(hypotheses)} sentences, but {ref} has {len(references)}")
    ref_edits = only_annotators(references, {0}) if single_ref else [s.edits for s in references]
    counts = score_corpus([s.edits for s in hypotheses], ref_edits, beta)
    p, r, f = prf(counts, beta)
    title = " Span-Based Correction "
    print(f"\n{title:=^46}")  # the same layout as errant_compare, tabs included
    print("\t".join(["TP", "FP", "FN", "Prec", "Rec", f"F{beta}"]))
    print("\t".join(str(x) for x in (counts.tp, counts.fp, counts.fn, p, r, f)))
    print("=" * 46 + "\n")


COMMANDS.register("m2", m2)
