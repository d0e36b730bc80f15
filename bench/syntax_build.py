"""Building the syntax-QA banks from 4,000 trees, without agents.

The trees are the project's treebank (`examples/syntax`, 58 trees in five files of every
shape the reader takes) copied into a temporary folder until there are enough, and the build
reads the first `--trees` of them: parsing, matching the nine points' patterns, writing and
sampling the questions, and the zero- and few-shot banks, every file of the run folder
written. Beside it, on the same files, the time NLTK's own `BracketParseCorpusReader` takes
just to parse the trees, the least any build reading them with NLTK can take.

    python bench/syntax_build.py [--trees 4000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TARGET_S = 60.0
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "syntax"


def copy_treebank(folder: Path, trees: int) -> int:
    """Copies of the example treebank under `folder` holding at least `trees` trees."""
    files = sorted(EXAMPLES.glob("*.mrg"))
    per_copy = sum(_count(f) for f in files)
    copies = -(-trees // per_copy)
    for n in range(copies):
        target = folder / f"copy-{n:04d}"
        target.mkdir(parents=True)
        for file in files:
            shutil.copyfile(file, target / file.name)
    return copies * per_copy


def _count(file: Path) -> int:
    from gramagents.recipes.syntax.treebank import read_file

    return len(read_file(file, file.name))


def nltk_parse_only(folder: Path, trees: int) -> float:
    """Seconds NLTK's corpus reader takes to parse the first `trees` trees of the folder."""
    import nltk
    from nltk.corpus.reader import BracketParseCorpusReader

    nltk.data.path.append(str(folder))  # NLTK's corpus readers open folders on its path only
    started = time.perf_counter()
    reader = BracketParseCorpusReader(str(folder), r".*\.mrg")
    seen = 0
    for fileid in reader.fileids():
        for _ in reader.parsed_sents(fileid):
            seen += 1
            if seen >= trees:
                return time.perf_counter() - started
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=4000)
    args = parser.parse_args()

    from gramagents.workflow.build import BuildOptions, run_build

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-syntax-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    source = work / "treebank"
    available = copy_treebank(source, args.trees)

    started = time.perf_counter()
    result = asyncio.run(
        run_build(
            "syntax-qa",
            BuildOptions(source=source, agents=False, limit=args.trees, run_dir=work / "build"),
        )
    )
    build_s = time.perf_counter() - started
    parse_s = nltk_parse_only(source, args.trees)

    stages = result.manifest.stages
    counts = Counter(item.task for item in result.items)
    print(
        f"source: {stages['read']['trees']} trees of {available} copied "
        f"({stages['read']['files']} files); {stages['extract']['matches']} matches; "
        f"{len(result.items)} items: " + ", ".join(f"{t} {n}" for t, n in counts.items())
    )
    print(
        f"build, agents off: {build_s:.2f} s; NLTK's BracketParseCorpusReader parsing the same "
        f"trees and nothing else: {parse_s:.2f} s (build / parse-only = {build_s / parse_s:.2f})"
    )
    shutil.rmtree(work, ignore_errors=True)
    ok = build_s < TARGET_S
    print(
        f"RESULT syntax_build_{args.trees} {build_s:.1f} s target < {TARGET_S:g} "
        f"{'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
