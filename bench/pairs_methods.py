"""Minimal pairs by two methods: log-probabilities compared, and a forced choice asked.

Runs `gramagents eval` on the shipped minimal pairs (`examples/minimal-pairs/`: CLiMP's three
file layouts and two BLiMP paradigms) with one model (the embedded SmolLM2 unless `--model`
names another), once with `--pairs loglik` and once with `--pairs choice`, and prints per
paradigm (CLiMP's `paradigm`, BLiMP's `UID`):

- `loglik`: the share of pairs whose grammatical sentence is the likelier (summed
  log-probability);
- `choice`: the share of presentations answered right (each pair asked twice), with each
  order's share (`good 1st`, `good 2nd`), `strict` (right in both orders) and `invalid` (pairs
  with a reply unread in either order);
- `consistent`: the share of pairs where both orders chose the same sentence;
- `agree`: the share of presentations whose chosen sentence is the one log-probabilities
  prefer (an unread reply agrees with nothing; with every reply read, 0.5 is what two
  unrelated methods give).

Chance is 0.5 for every share but `strict` (0.25). A small model is expected near chance on the
forced choice (Hu & Levy 2023 find prompting below log-probabilities even for large models);
the point of the table is that both numbers exist, side by side and honestly labelled. Ends with
one RESULT line over all pairs. `--keep FILE` writes the forced-choice replies with their
prompts and readings (to hand-read into the reply corpus).

    python bench/pairs_methods.py [--model smollm2] [--keep FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SETS = (
    ("climp", ROOT / "examples" / "minimal-pairs" / "climp", "paradigm"),
    ("blimp", ROOT / "examples" / "minimal-pairs" / "blimp", "UID"),
)
COLUMNS = ("loglik", "choice", "good 1st", "good 2nd", "strict", "consistent", "agree", "invalid")


def _scores(folder: Path) -> dict[str, dict[str, Any]]:
    lines = (folder / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["item_id"]: r for r in map(json.loads, lines) if r}


async def _run(path: Path, fmt: str, pairs: str, model: str, folder: Path) -> None:
    from gramagents.workflow.eval import EvalOptions, run_eval

    options = EvalOptions(models=[model], fmt=fmt, run_dir=folder, pairs=pairs, view=False)
    result = await run_eval(path, options)
    if result.manifest.status != "complete":
        raise SystemExit(f"{fmt} {pairs}: {result.manifest.reason}")


def _row(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, float]:
    """The table's shares over some pairs: (log-probability score, forced-choice score)."""
    n = len(pairs)
    loglik = sum(a["scores"]["acc"] for a, _ in pairs) / n
    mean = {
        key: sum(c["scores"][key] for _, c in pairs) / n
        for key in ("acc", "acc_good_first", "acc_good_second", "acc_strict", "consistency")
    }
    agree = sum(chosen == a["extracted"] for a, c in pairs for chosen in c["extracted"]) / (2 * n)
    return {
        "loglik": loglik,
        "choice": mean["acc"],
        "good 1st": mean["acc_good_first"],
        "good 2nd": mean["acc_good_second"],
        "strict": mean["acc_strict"],
        "consistent": mean["consistency"],
        "agree": agree,
        "invalid": sum(c["invalid"] for _, c in pairs) / n,
    }


def _table(rows: list[tuple[str, str, int, dict[str, float]]]) -> list[str]:
    lines = [
        "| set | paradigm | pairs | " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * (3 + len(COLUMNS)),
    ]
    for name, paradigm, n, shares in rows:
        cells = " | ".join(f"{shares[c]:.3f}" for c in COLUMNS)
        lines.append(f"| {name} | {paradigm} | {n} | {cells} |")
    return lines


def _keep(path: Path, folders: list[Path]) -> None:
    """The forced-choice replies, each with its prompt and how it was read."""
    with path.open("w", encoding="utf-8") as out:
        for folder in folders:
            for line in (folder / "responses.jsonl").read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                for choice in record.get("choices") or []:
                    out.write(json.dumps({"item_id": record["item_id"], **choice}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pairs-methods-"))
    os.environ["GRAMAGENTS_CACHE"] = str(work / "cache.sqlite")  # fresh answers, none shared
    rows: list[tuple[str, str, int, dict[str, float]]] = []
    every: list[tuple[dict[str, Any], dict[str, Any]]] = []
    choice_folders = []
    for name, path, key in SETS:
        folders = {m: work / f"{name}-{m}" for m in ("loglik", "choice")}
        for method, folder in folders.items():
            asyncio.run(_run(path, name, method, args.model, folder))
        choice_folders.append(folders["choice"])
        loglik, choice = _scores(folders["loglik"]), _scores(folders["choice"])
        assert set(loglik) == set(choice), "both methods ask the same pairs"
        groups: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
        for item_id, record in loglik.items():
            groups[str(record["meta"].get(key))].append((record, choice[item_id]))
        for paradigm, pairs in sorted(groups.items()):
            rows.append((name, paradigm, len(pairs), _row(pairs)))
            every += pairs
    rows.append(("all", "", len(every), _row(every)))
    print(f"model {args.model}; load average {os.getloadavg()[0]:.1f}", flush=True)
    print("\n".join(_table(rows)))
    if args.keep is not None:
        _keep(args.keep, choice_folders)
    total = rows[-1][3]
    print(
        f"RESULT pairs_methods {len(every)} pairs: loglik acc {total['loglik']:.3f}, choice acc "
        f"{total['choice']:.3f} (good first {total['good 1st']:.3f}, good second "
        f"{total['good 2nd']:.3f}, strict {total['strict']:.3f}), consistency "
        f"{total['consistent']:.3f}, agreement {total['agree']:.3f}, invalid "
        f"{total['invalid']:.3f} (chance 0.5; strict 0.25)"
    )


if __name__ == "__main__":
    sys.exit(main())
