r"""Syntax-QA on a real treebank: balance of the knowledge points, right answers, clean text.

Builds the syntax-QA banks from PATH (agents off), e.g. NLTK's WSJ sample (the `combined`
folder of `corpora/treebank`: wsj_0001.mrg ... wsj_0199.mrg), and checks on what was built:

- per knowledge point, the TF / MC / FITB test questions and their shares beside the paper's
  Table 1; no point over 25 % of MC or FITB, and every point with at least 30 % of its
  paper share, unless the trees hold too few questions of it (then said, not failed);
- every question of the test and exemplar sets, checked again against every pattern of the
  patterns file (`verify.Verifier`): 0 with a second right option (MC), a right answer
  asserted as wrong (TF) or more than one right answer (FITB);
- everything shown to a model (sentences, questions, options, worked examples, gold
  answers): 0 Penn Treebank escapes (`\\/`, `\\*`, `-LRB-`, `-RRB-`, the quote tokens);
- the Random FITB baseline (a uniformly random span of the sentence) beside the paper's.

    python bench/syntax_real.py PATH
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

MAX_SHARE = 0.25
MIN_OF_PAPER = 0.30
ESCAPE = re.compile(r"\\/|\\\*|-[LR][RSC]B-|``|''|-NONE-")
PAPER_RANDOM_FITB = {"zero-shot": (0.42, 22.20), "few-shot": (0.68, 23.21)}
"""The paper's Random row, FITB accuracy and F1 in percent (Table 6)."""


def build(source: Path, work: Path) -> tuple[object, float]:
    """The build result and its seconds."""
    from gramagents.workflow.build import BuildOptions, run_build

    started = time.perf_counter()
    result = asyncio.run(
        run_build("syntax-qa", BuildOptions(source=source, agents=False, run_dir=work / "build"))
    )
    return result, time.perf_counter() - started


def balance(info: dict) -> tuple[list[str], list[str]]:
    """The per-point table's lines, and the problems found."""
    from gramagents.recipes.syntax.paper import TABLE_1, shares

    lines, problems = [], []
    ratios: list[tuple[float, str]] = []
    for kind in ("TF", "MC", "FITB"):
        drawn = info["test"].get(kind, {})
        here, paper = shares(drawn, kind), shares(TABLE_1[kind], kind)
        cells = [f"{p} {drawn.get(p, 0)} ({100 * here.get(p, 0):.1f} %)" for p in TABLE_1[kind]]
        lines.append(f"{kind:4} " + ", ".join(cells))
        if kind == "TF":
            continue
        ratios += [(here.get(p, 0) / share, f"{kind} {p}") for p, share in paper.items()]
        for point, share in paper.items():
            mine = here.get(point, 0.0)
            possible = info["candidates"].get(kind, {}).get(point, 0)
            if mine > MAX_SHARE:
                problems.append(f"{kind} {point} {100 * mine:.1f} % > {100 * MAX_SHARE:.0f} %")
            if mine < MIN_OF_PAPER * share:
                total = sum(drawn.values())
                if possible < MIN_OF_PAPER * share * total:
                    lines.append(f"     {kind} {point}: the trees hold only {possible} questions")
                else:
                    problems.append(
                        f"{kind} {point} {100 * mine:.1f} % < {100 * MIN_OF_PAPER:.0f} % of the "
                        f"paper's {100 * share:.1f} %"
                    )
    low = min(ratios)
    lines.append(f"lowest share against the paper's (MC, FITB): {low[1]} {low[0]:.2f}x")
    return lines, problems


def candidates(info: dict) -> list[str]:
    """Every question the trees allow (MC), per point, beside the paper's Table 4 shares."""
    from gramagents.recipes.syntax.paper import TABLE_4, shares

    found = info["candidates"].get("MC", {})
    here, paper = shares(found, "MC"), shares(TABLE_4["MC"], "MC")
    return [
        "all MC questions the trees allow (share; the paper's Table 4 share): "
        + ", ".join(
            f"{p} {found.get(p, 0)} ({100 * here.get(p, 0):.1f} %; {100 * paper[p]:.1f} %)"
            for p in TABLE_4["MC"]
        )
    ]


def recheck(folder: Path, source: Path) -> tuple[int, Counter]:
    """Every question of the test and exemplar sets, checked again: (checked, problems)."""
    from gramagents.recipes.syntax.points import load_points
    from gramagents.recipes.syntax.reader import TREES, read_treebank
    from gramagents.recipes.syntax.records import SyntaxQuestion
    from gramagents.recipes.syntax.verify import Verifier
    from gramagents.sources import ReadOptions

    trees = read_treebank(source, ReadOptions()).context[TREES]
    verifier = Verifier(trees, load_points("syntax/patterns.yaml"))
    problems: Counter = Counter()
    checked = 0
    with (folder / "questions.jsonl").open() as lines:
        for line in lines:
            question = SyntaxQuestion.model_validate_json(line)
            if question.borrowed_from:  # MVP's copy of a True/False question, checked as it
                continue
            checked += 1
            problem = verifier.problem(question)
            if problem is not None:
                problems[f"{question.type}: {problem}"] += 1
    return checked, problems


def escapes(items: list) -> tuple[int, int, Counter]:
    """(answers with an escape, shown texts with one, which escapes) over every item."""
    in_answers = in_shown = 0
    found: Counter = Counter()
    for item in items:
        shown = item.prompt.vars
        answers = [str(item.answer), *(o["text"] for o in shown.get("options", []))]
        texts = [shown["sentence"], shown["question"]]
        for shot in shown.get("shots", []):
            answers += [shot["answer"], *(o["text"] for o in shot.get("options", []))]
            texts += [shot["sentence"], shot["question"]]
        for text in answers:
            hits = ESCAPE.findall(text)
            in_answers += bool(hits)
            found.update(hits)
        for text in texts:
            hits = ESCAPE.findall(text)
            in_shown += bool(hits)
            found.update(hits)
    return in_answers, in_shown, found


def random_fitb(items: list) -> list[str]:
    """The Random FITB row per setting, beside the paper's."""
    lines = []
    for setting, few in (("zero-shot", False), ("few-shot", True)):
        chosen = [i for i in items if i.task.startswith("SYNTAX-FITB") and few == ("@s" in i.id)]
        if not chosen:
            continue
        acc = 100 * sum(i.meta["random_acc"] for i in chosen) / len(chosen)
        f1 = 100 * sum(i.meta["random_f1"] for i in chosen) / len(chosen)
        paper = PAPER_RANDOM_FITB[setting]
        lines.append(
            f"Random FITB {setting}: acc {acc:.2f}, F1 {f1:.2f} "
            f"(paper: {paper[0]:.2f}, {paper[1]:.2f}; {len(chosen)} items)"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="a treebank folder, e.g. .../treebank/combined")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gramagents-bench-syntax-real-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")
    try:
        result, seconds = build(args.path, work)
        folder = work / "build"
        manifest = json.loads((folder / "manifest.json").read_text())
        info = manifest["artifacts"]["syntax"]
        stages = manifest["stages"]
        print(
            f"source: {stages['read']['trees']} trees; {stages['extract']['matches']} matches; "
            f"{len(result.items)} items; build {seconds:.1f} s"
        )
        lines, problems = balance(info)
        print("test questions per point (share of the type):")
        print("\n".join(lines))
        print("\n".join(candidates(info)))
        dropped = {k: v for k, v in stages["questions"].items() if k.startswith("dropped")}
        print(f"verifier while drawing: {stages['questions']['verified']} checked, {dropped}")
        checked, wrong = recheck(folder, args.path)
        print(f"checked again: {checked} questions, {sum(wrong.values())} with a problem")
        print("".join(f"  {why}: {n}\n" for why, n in wrong.items()), end="")
        answers, shown, which = escapes(result.items)
        print(f"escapes: {answers} answers, {shown} other shown texts {dict(which)}")
        print("\n".join(random_fitb(result.items)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    problems += [f"{n} questions with a problem" for n in [sum(wrong.values())] if n]
    problems += [f"{n} texts with an escape" for n in [answers + shown] if n]
    ok = not problems
    print("problems: " + ("; ".join(problems) if problems else "none"))
    print(f"RESULT syntax_real balance+verified+escapes {'pass' if ok else 'fail'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
