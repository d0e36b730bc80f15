"""Building the public EduEval release with `--agents off`, and checking what the build kept.

PATH is the release's `Edata/` folder (one folder per level, 24 task files, 11,150 lines).
The build runs once with an empty cache and is timed; then, from its run folder:

- the share of lines parsed into items;
- every near-duplicate the dedup removed, checked afresh against the source: the exact
  Jaccard of the two items' shingles at least the threshold, and the same gold and options;
- the answer-key spot checks and the review queue, each as a share of the items;
- the route cross-check: how often the classifier's level differs from the layout's, and how
  many it flags (confident disagreements).

`--minilm` also runs the route cross-check on all-MiniLM-L6-v2 beside `tfidf-char` (the
recipe's model), and prints each one's agreement with the layout and its time.

    python bench/edu_release.py PATH [--minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PARSED_TARGET = 0.995
SHARE_TARGET = 0.05
BUILD_TARGET_S = 300.0


def _build(source: Path, work: Path) -> tuple[Any, float]:
    from gramagents.workflow.build import BuildOptions, run_build

    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    started = time.perf_counter()
    result = asyncio.run(
        run_build("edu", BuildOptions(source=source, agents=False, run_dir=work / "build"))
    )
    return result, time.perf_counter() - started


def _check_pairs(source: Path, pairs: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """How many removals hold (similarity >= threshold, same gold and options), and the rest."""
    from gramagents.recipes.edu.sources import read_edueval
    from gramagents.workflow.filters import jaccard, shingles
    from gramagents.workflow.nodes import texts

    items = {i.id: i for i in read_edueval(source).items}
    good, bad = 0, []
    for pair in pairs:
        removed, kept = items[pair["removed"]], items[pair["kept"]]
        a, b = texts([removed, kept], ["prompt", "options"])
        similarity = jaccard(shingles(a), shingles(b))
        same = removed.answer == kept.answer and removed.options == kept.options
        if similarity >= pair["threshold"] and same:
            good += 1
        else:
            bad.append(f"{removed.id} / {kept.id}: {similarity:.3f}, same gold {same}")
    return good, bad


def _route_models(folder: Path, minilm: bool) -> None:
    from gramagents.recipes.edu.sources import EduItem
    from gramagents.runtime.cache import NullCache
    from gramagents.runtime.embeddings import Embedder
    from gramagents.workflow.filters import cross_validated_labels

    items = [EduItem.model_validate_json(line) for line in (folder / "standardized.jsonl").open()]
    embed = Embedder(NullCache()).embed
    for model, min_df in (("tfidf-char", 5), *((("minilm", 1),) if minilm else ())):
        started = time.perf_counter()
        predicted = cross_validated_labels(
            {i.id: i.prompt[:1000] for i in items},
            {i.id: i.level for i in items},
            embed,
            model,
            2,
            min_df,
        )
        elapsed = time.perf_counter() - started
        agree = sum(1 for i in items if predicted[i.id].label == i.level)
        confident = sum(
            1
            for i in items
            if predicted[i.id].label != i.level and predicted[i.id].confidence >= 0.7
        )
        print(
            f"route check on {model}: agrees with the layout on {agree} of {len(items)} "
            f"({agree / len(items):.1%}); confident (p >= 0.7) disagreements {confident}; "
            f"{elapsed:.1f} s (vectors and 5-fold classifier, no cache)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="the release's Edata/ folder")
    parser.add_argument("--minilm", action="store_true", help="compare the route check's models")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-edu-"))
    result, elapsed = _build(args.path, work)
    manifest, folder = result.manifest, work / "build"
    ingest, stages = manifest.stages["ingest"], manifest.stages
    items = stages["anomalies"]["checked"]
    parsed = ingest["parsed"] / ingest["read"]
    pairs = (manifest.artifacts or {}).get("dedup", [])
    good, bad = _check_pairs(args.path, pairs)
    review_rows = sum(1 for _ in csv.DictReader((folder / "review.csv").open(encoding="utf-8")))
    spot = stages["anomalies"]["key_spot_checks"]
    print(f"stages: {json.dumps(stages, ensure_ascii=False)}")
    print(f"read {ingest['read']} lines, parsed {ingest['parsed']} ({parsed:.2%})")
    print(f"dedup removed {len(pairs)}; {good} hold (similarity >= threshold, same gold):")
    for pair in pairs:
        print(f"  {pair['removed']}  repeats  {pair['kept']}  ({pair['similarity']:.3f})")
    for line in bad:
        print(f"  DOES NOT HOLD: {line}")
    print(
        f"answer keys: {stages['anomalies']['key_groups_skewed']} of "
        f"{stages['anomalies']['key_groups_tested']} groups skewed, {spot} spot checks "
        f"({spot / items:.2%} of {items} items)"
    )
    print(f"review queue: {review_rows} rows ({review_rows / items:.2%} of {items} items)")
    print(f"build with --agents off, empty cache: {elapsed:.1f} s")
    _route_models(folder, args.minilm)
    checks = [
        ("edu_parsed", f"{parsed:.2%}", f">= {PARSED_TARGET:.1%}", parsed >= PARSED_TARGET),
        ("edu_dedup_pairs_hold", f"{good}/{len(pairs)}", "all", good == len(pairs)),
        ("edu_key_flags", f"{spot / items:.2%}", "< 5%", spot / items < SHARE_TARGET),
        (
            "edu_review_queue",
            f"{review_rows / items:.2%}",
            "< 5%",
            review_rows / items < SHARE_TARGET,
        ),
        ("edu_build_s", f"{elapsed:.1f} s", f"< {BUILD_TARGET_S:g} s", elapsed < BUILD_TARGET_S),
    ]
    for name, figure, target, ok in checks:
        print(f"RESULT {name} {figure} target {target} {'pass' if ok else 'fail'}")
    return 0 if all(ok for *_, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
