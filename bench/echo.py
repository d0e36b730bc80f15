"""Where the echo thresholds come from: how much real replies and echoes copy of their prompts.

Builds the example banks (CPG, syntax-QA, EduEval, GEC; no agents), has a model answer up to
`--limit` items per task (the embedded default unless `--model` names another; rubric-judged
and minimal-pair tasks left out), and measures,
for every copy-run length in `--runs`:

- how many of the model's replies the prompt changes the reading of (an answer token hidden
  as copied, or a reply read as an echo), with examples to look at;
- how many echoes made from the same prompts (the user message whole, its first line, its last
  line, its first half) are still read as an answer;
- how many replies of the corpus (`tests/data/replies.jsonl`) are read otherwise than the
  grader reads them;
- what the echo decisions measure (for a token answer, the share of the reply copied from
  the prompt; for a text answer, the share of the answer copied from the prompt's
  instruction): quantiles, and how many reach each share in `SHARES`, for the model's
  replies, those of them no rule reads, and the echoes.

    python bench/echo.py [--model smollm2] [--limit 12] [--runs 4,6,8,10,12,16]
                         [--keep FILE | --replies FILE]

`--keep FILE` writes the model's replies with their prompts; `--replies FILE` measures such a
file again without asking a model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARES = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
BUILDS = (
    ("cpg", ROOT / "examples" / "cpg" / "grammar-points.jsonl"),
    ("syntax-qa", ROOT / "examples" / "syntax"),
    ("edu", ROOT / "examples" / "edu"),
    ("gec", ROOT / "examples" / "gec" / "grammar-items.jsonl"),
)


@dataclass
class Case:
    """A reply to a prompt, read with a chain."""

    chain: str
    meta: dict[str, Any]
    messages: list[Any]
    reply: str
    kind: str
    """`real`, or the kind of echo it was made as."""


def answered(model: str, limit: int, work: Path) -> Iterator[Case]:
    """The model's replies to the example banks, with what reading them needs."""
    from gramagents.records import Item
    from gramagents.runtime.rundir import iter_jsonl
    from gramagents.tasks import get_task
    from gramagents.templates import load_prompt
    from gramagents.workflow.build import BuildOptions, run_build
    from gramagents.workflow.eval import EvalOptions, run_eval

    for recipe, source in BUILDS:
        built = asyncio.run(
            run_build(recipe, BuildOptions(source=source, agents=False, run_dir=work / recipe))
        )
        run = work / f"{recipe}-eval"
        items = {i["id"]: Item.model_validate(i) for i in iter_jsonl(built.dataset_path)}
        asked = work / f"{recipe}.jsonl"  # judged and minimal-pair tasks left out
        asked.write_text(
            "".join(
                item.model_dump_json() + "\n"
                for item in items.values()
                if (spec := get_task(item.task)) is not None
                and spec.mode != "loglikelihood"
                and spec.rubric is None
            ),
            encoding="utf-8",
        )
        options = EvalOptions(models=[model], limit=limit, run_dir=run, view=False)
        asyncio.run(run_eval(asked, options))
        for response in iter_jsonl(run / "responses.jsonl"):
            item = items[response["item_id"]]
            spec = get_task(item.task)
            if spec is None or spec.mode == "loglikelihood" or response.get("raw") is None:
                continue
            messages = load_prompt(item.prompt.template).render(item.prompt.vars)
            meta = {**item.prompt.vars, **item.meta}
            yield Case(spec.extractor, meta, messages, response["raw"], "real")


def echoes(case: Case) -> Iterator[Case]:
    """Echoes of a case's prompt: the user message whole, its first and last lines, half."""
    user = [_part(m, "content") for m in case.messages if _part(m, "role") == "user"][-1].strip()
    lines = [line for line in user.splitlines() if line.strip()]
    made = {
        "whole": user,
        "first line": lines[0] if lines else "",
        "last line": lines[-1] if lines else "",
        "first half": user[: len(user) // 2],
    }
    for kind, text in made.items():
        if text.strip():
            yield Case(case.chain, case.meta, case.messages, text, kind)


def _part(message: Any, name: str) -> Any:
    return message[name] if isinstance(message, dict) else getattr(message, name)


def kept(path: Path) -> Iterator[Case]:
    """Replies written by an earlier run's `--keep`."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            yield Case(entry["chain"], entry["meta"], entry["prompt"], entry["reply"], "real")


def corpus() -> Iterator[tuple[Case, dict[str, Any]]]:
    """The reply corpus, each entry with what a grader reads."""
    path = ROOT / "tests" / "data" / "replies.jsonl"
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            kind = "echo" if entry["expected"].get("reason") == "echo" else "real"
            case = Case(entry["chain"], entry.get("meta") or {}, [], entry["reply"], kind)
            case.messages = entry["prompt"]
            yield case, entry


def is_text(case: Case) -> bool:
    from gramagents.scoring.extract import chain_spec

    return chain_spec(case.chain).answer == "text"


def share_of(case: Case) -> float:
    """What the echo decisions measure, at the current copy-run length.

    For answers that are text: the share of the answer (as the chain reads it without the
    prompt) copied from the instruction, the prompt without the item's own text. For tokens:
    the share of the reply copied from the prompt.
    """
    from gramagents.scoring import echo
    from gramagents.scoring.extract import chain_spec
    from gramagents.scoring.normalise import normalise_reply

    reply = normalise_reply(case.reply)
    spec = chain_spec(case.chain)
    if spec.answer == "text":
        value = reading(case, False)[0]
        text = str(value) if value is not None else reply
        prompt = echo.Prompt(case.messages, echo.own_texts(case.meta, spec.own_text))
        return echo.share(text, echo.copied(text, prompt.instruction, prompt.own_squeezed))
    prompt = echo.Prompt(case.messages)
    return echo.share(reply, echo.copied(reply, prompt.squeezed))


def reading(case: Case, with_prompt: bool) -> tuple[Any, str | None]:
    from gramagents.scoring.extract import extract

    found = extract(case.chain, case.reply, case.meta, case.messages if with_prompt else None)
    return found.value, found.reason


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return " ".join(f"{v:.2f}" for v in values)
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return f"median {statistics.median(values):.2f}, p90 {cuts[17]:.2f}, p95 {cuts[18]:.2f}"


def at_least(shares: list[float]) -> str:
    return ", ".join(f">={t}: {sum(s >= t for s in shares)}" for t in SHARES)


def report(run: int, real: list[Case], made: list[Case], graded: list[tuple[Case, Any]]) -> None:
    """One copy-run length's figures."""
    known = {id(c): (reading(c, True), reading(c, False)) for c in real}
    lost = [c for c in real if known[id(c)][0][0] != known[id(c)][1][0]]
    echoed = [c for c in real if known[id(c)][0][1] == "echo"]
    missed = [c for c in made if reading(c, True)[1] is None]
    wrong = [c for c, e in graded if _reading_of(c) != e]
    print(f"\n## copy run {run}")
    print(
        f"model replies: {len(real)}, {len(echoed)} read as echoes; answers the prompt changes "
        f"(a token hidden, an echo seen): {len(lost)}; echoes made from the prompts read as an "
        f"answer: {len(missed)} of {len(made)}; corpus replies read otherwise than the grader: "
        f"{len(wrong)} of {len(graded)}"
    )
    for case in lost[:6]:
        before, after = known[id(case)][1], known[id(case)][0]
        print(f"  changed: {case.chain} {case.reply[:70]!r}: {before} -> {after}")
    for case in missed[:6]:
        print(
            f"  missed echo ({case.kind}): {case.chain} {case.reply[-50:]!r} "
            f"-> {reading(case, True)}"
        )
    for case in wrong[:6]:
        print(f"  corpus: {case.chain} {case.reply[:70]!r} -> {_reading_of(case)}")
    for text in (False, True):
        what = (
            "text answers (share of the answer copied from the instruction)"
            if text
            else "token answers (share of the reply copied from the prompt)"
        )
        ours = [share_of(c) for c in real if is_text(c) == text]
        echoed = [share_of(c) for c in made if is_text(c) == text]
        unread = [share_of(c) for c in real if is_text(c) == text and reading(c, True)[1]]
        print(f"{what}:")
        print(f"  real ({len(ours)}): {quantiles(ours)}; {at_least(ours)}")
        print(f"  real, unread ({len(unread)}): {quantiles(unread)}; {at_least(unread)}")
        print(f"  echoes ({len(echoed)}): {quantiles(echoed)}; {at_least(echoed)}")


def _reading_of(case: Case) -> dict[str, Any]:
    value, reason = reading(case, True)
    return {"value": value, "reason": reason} if reason else {"value": value}


def _grader(expected: dict[str, Any]) -> dict[str, Any]:
    reason = expected.get("reason")
    return (
        {"value": expected.get("value"), "reason": reason}
        if reason
        else {"value": expected.get("value")}
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--limit", type=int, default=12, help="items per task")
    parser.add_argument("--runs", default="4,6,8,10,12,16")
    parser.add_argument("--keep", type=Path, help="write the model's replies here (JSONL)")
    parser.add_argument("--replies", type=Path, help="measure replies kept earlier instead")
    args = parser.parse_args()

    from gramagents.scoring import echo

    if args.replies:
        real = list(kept(args.replies))
    else:
        with tempfile.TemporaryDirectory(prefix="gramagents-bench-echo-") as folder:
            work = Path(folder)
            os.environ.setdefault("GRAMAGENTS_CACHE", str(work / "cache.sqlite"))
            real = list(answered(args.model, args.limit, work))
    made = [e for case in real for e in echoes(case)]
    graded = [(c, _grader(e["expected"])) for c, e in corpus()]
    if args.keep:
        with args.keep.open("w", encoding="utf-8") as handle:
            for case in real:
                line = {
                    "chain": case.chain,
                    "reply": case.reply,
                    "prompt": [m.model_dump() for m in case.messages],
                    "meta": case.meta,
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(real)} replies of {args.model}, {len(made)} echoes, {len(graded)} corpus entries")
    chosen = echo.COPY_RUN
    for run in (int(r) for r in args.runs.split(",")):
        echo.COPY_RUN = run
        report(run, real, made, graded)
    echo.COPY_RUN = chosen
    return 0


if __name__ == "__main__":
    sys.exit(main())
