"""The released CPG-EVAL banks: read whole, golds derived, and rebuilt from the table they imply.

PATH is the release's `question_bank/` folder (six bank files and `CPG-Eval_lite.csv`). The
script reads it as `gramagents eval PATH --format cpg-eval` does and prints what each file gave
and the golds derived from the release; derives the grammar-point table the banks imply
(`recipes/cpg/release_table.py`), builds every bank from it with `graphs/cpg.yaml` and no
agents, and sets each bank's size beside the paper's Table 1. It then measures how many of the
four SIM-GRA distractors of each question the released bank has too, for the recipe's
similarity (`tfidf-char`) and for MiniLM (the packaged all-MiniLM-L6-v2), side by side.

    python bench/cpg_release.py PATH [--answers-out FILE]

`--answers-out` writes the golds of every item that has one (`id,answer`, the released ids),
an answer file for `gramagents eval --answers`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

TABLE_1 = {
    "SINGLE-T": 6651,
    "SINGLE-F": 11968,
    "BATCH-T": 739,
    "BATCH-F": 11968,
    "SIM-GRA": 6651,
    "CAT-GRA": 5283,
    "CON-INS-F10": 314,
    "CON-INS-T5F5": 314,
}
TARGET_OVERLAP = 0.45


def released_distractors(dataset_items, points) -> dict[str, list[set[str]]]:
    """Point id -> the distractor labels of each of its released SIM-GRA questions."""
    from gramagents.recipes.cpg.release_parse import parse

    single = sorted(
        (i for i in dataset_items if i.task == "SINGLE-T"), key=lambda i: int(i.meta["source_id"])
    )
    sim = sorted(
        (i for i in dataset_items if i.task == "SIM-GRA"), key=lambda i: int(i.meta["source_id"])
    )
    owner = [p.id for p in points for _ in p.examples]
    found: dict[str, list[set[str]]] = defaultdict(list)
    for row, (asked, question) in enumerate(zip(single, sim, strict=True)):
        label = parse("SINGLE-T", asked.prompt.vars["text"]).label
        options = parse("SIM-GRA", question.prompt.vars["text"]).options
        found[owner[row]].append({text for _, text in options if text != label})
    return found


def overlap(points, model: str, released: dict[str, list[set[str]]]) -> tuple[float, float]:
    """Mean share of the four distractors in common, and the seconds the ranking took."""
    from gramagents.recipes.cpg.banks import build_banks
    from gramagents.recipes.cpg.params import BankParams, SimGraParams
    from gramagents.runtime.cache import NullCache
    from gramagents.runtime.embeddings import Embedder
    from gramagents.sources.points import source_instances
    from gramagents.tasks.registry import BuildResources

    started = time.perf_counter()
    items = build_banks(
        points,
        source_instances(points),
        {"SIM-GRA": SimGraParams()},
        BankParams(embedding_model=model),
        BuildResources(seed=1234, embed=Embedder(NullCache()).embed),
    )
    seconds = time.perf_counter() - started
    ours = {}
    for item in items:
        ours.setdefault(
            item.meta["point"],
            {o["text"] for o in item.meta["options"] if o["key"] != item.answer},
        )
    shares = [len(ours[point] & theirs) / 4 for point, rows in released.items() for theirs in rows]
    return sum(shares) / len(shares), seconds


def read_release(path: Path, answers_out: Path | None):
    """The release read as `--format cpg-eval` reads it, with what each file gave."""
    from gramagents.sources.datasets import read_dataset

    started = time.perf_counter()
    dataset = read_dataset(path, "cpg-eval")
    print(f"read {len(dataset.items)} items in {time.perf_counter() - started:.1f} s")
    for entry in dataset.info["files"]:
        banks = ", ".join(f"{b} {n}" for b, n in entry["banks"].items())
        print(
            f"  {entry['file']}: {entry['rows']} rows, asked {banks}; "
            f"{entry['in_bank_files']} also in a bank file, {entry['repeats']} repeats; "
            f"golds {entry['golds']}"
        )
    for name in dataset.info["skipped"]:
        print(f"  {name}: skipped")
    for bank, gold in dataset.info["golds"].items():
        print(
            f"golds {bank}: {gold['derived']} derived, {gold['ambiguous']} ambiguous, "
            f"{gold['missing']} missing ({gold['rule']})"
        )
    if answers_out:
        from gramagents.recipes.cpg.released_writer import write_answers

        golds = {i.meta["source_id"]: str(i.answer) for i in dataset.items if i.answer}
        write_answers(golds, answers_out)
        print(f"answers: {len(golds)} written to {answers_out}")
    return dataset


def rebuild(dataset, work: Path):
    """The table the release implies, and the banks built from it; True when sizes match."""
    from gramagents.recipes.cpg.release_table import write_release_table
    from gramagents.recipes.cpg.table import read_grammar_table
    from gramagents.workflow.build import BuildOptions, run_build

    table = work / "table.jsonl"
    for note in write_release_table(dataset.items, table):
        print(f"table note: {note}")
    notes: list[str] = []
    points = read_grammar_table(table, notes=notes)
    grouped = Counter(p.group for p in points if p.group)
    print(
        f"table: {len(points)} points, {sum(len(p.examples) for p in points)} sentences, "
        f"{len(grouped)} groups, {sum(1 for p in points if not p.group)} points in none, "
        f"{sum(1 for p in points if p.confusers)} with confusing instances"
    )
    for note in notes:
        print(f"table reader: {note}")
    started = time.perf_counter()
    result = asyncio.run(
        run_build("cpg", BuildOptions(source=table, agents=False, run_dir=work / "build"))
    )
    built = Counter(item.task for item in result.items)
    print(f"built in {time.perf_counter() - started:.1f} s (graphs/cpg.yaml, --agents off):")
    for bank, paper in TABLE_1.items():
        print(f"  {bank}: {built[bank]} (Table 1: {paper})")
    return points, all(built[bank] == paper for bank, paper in TABLE_1.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--answers-out", type=Path)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-cpg-release-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    dataset = read_release(args.path, args.answers_out)
    points, same = rebuild(dataset, work)
    released = released_distractors(dataset.items, points)
    measured = {model: overlap(points, model, released) for model in ("tfidf-char", "minilm")}
    for model, (share, seconds) in measured.items():
        print(f"SIM-GRA distractors in common with the release, {model}: {share:.3f}", end="")
        print(f" ({seconds:.1f} s)")
    ours = measured["tfidf-char"][0]
    ok = same and ours >= TARGET_OVERLAP
    print(
        f"RESULT cpg_release sizes {'= Table 1' if same else '!= Table 1'}, SIM-GRA overlap "
        f"{ours:.3f} (minilm {measured['minilm'][0]:.3f}) target >= {TARGET_OVERLAP:g} "
        f"{'pass' if ok else 'fail'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
