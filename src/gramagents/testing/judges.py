"""Rubric judges of known behaviour, for tests and benchmarks of juries and `judge-check`.

Each reads the judge prompt (`prompts/judge.md`): the answer between its fence tags, the
rubric's dimensions and their points from the reply template, and replies with a verdict
whose dimension scores share one fraction of their points, their sum the total:

- `fair`: scores the answer's own content, its first paragraph (where no probe writes), 40 to
  90 % of the scale by a hash of it;
- `gullible`: fair, but full marks when the answer asks for them ("full marks", "满分", ...);
- `lengthy`: scores grow with the answer's length, 12 points of 100 for each doubling;
- `noisy`: fair, plus uniform noise of up to 15 % of the scale either way, drawn afresh for
  every request (a seeded generator shared by the process).

`scripted(kind)` is a responder for the scripted backend (`scripted:NAME`), `served(kind)` one
for the test chat server (testing/openai_server.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
from collections.abc import Callable
from typing import Any

from .openai_server import last_user_text

KINDS = ("fair", "gullible", "lengthy", "noisy")
ASKS_FOR_MARKS = re.compile(r"full marks|maximum score|满分|最高分", re.IGNORECASE)
_DIMENSION = re.compile(r'^\s*("(?:[^"\\]|\\.)*"): <score from 0 to ([0-9.]+)>,?\s*$', re.M)
_NOISE = random.Random(20240601)
_NOISE_LOCK = threading.Lock()


def graded_answer(prompt: str) -> str:
    """The answer a judge prompt fences (the last opening tag: the instruction names it too)."""
    found = list(re.finditer(r"<answer-([0-9a-z]+)>", prompt))
    if not found:
        return ""
    last = found[-1]
    end = prompt.find(f"</answer-{last.group(1)}>", last.end())
    return prompt[last.end() : end if end >= 0 else len(prompt)].strip()


def dimensions(prompt: str) -> list[tuple[str, float]]:
    """The rubric's dimensions and their points, as the reply template lists them."""
    return [(json.loads(name), float(points)) for name, points in _DIMENSION.findall(prompt)]


def fair_share(answer: str) -> float:
    """The fair judge's share of the scale: 0.40 to 0.90, by a hash of the first paragraph."""
    first = answer.strip().split("\n\n")[0]
    digest = int(hashlib.sha256(first.encode("utf-8")).hexdigest()[:8], 16)
    return 0.40 + (digest % 51) / 100


def share_of(kind: str, answer: str) -> float:
    """What a judge of `kind` gives `answer`, as a share of the scale."""
    if kind == "fair":
        return fair_share(answer)
    if kind == "gullible":
        return 1.0 if ASKS_FOR_MARKS.search(answer) else fair_share(answer)
    if kind == "lengthy":
        return min(1.0, max(0.0, 0.20 + 0.12 * math.log2(max(len(answer), 1) / 50)))
    if kind == "noisy":
        with _NOISE_LOCK:
            noise = _NOISE.uniform(-0.15, 0.15)
        return min(1.0, max(0.0, fair_share(answer) + noise))
    raise ValueError(f"unknown judge kind '{kind}' (kinds: {', '.join(KINDS)})")


def verdict(kind: str, prompt: str) -> str:
    """The reply of a judge of `kind` to a judge prompt."""
    answer = graded_answer(prompt)
    share = share_of(kind, answer)
    scores = {name: round(points * share, 2) for name, points in dimensions(prompt)}
    reply: dict[str, Any] = {**scores, "total": round(sum(scores.values()), 2)}
    reply["reason"] = f"{kind} judge: {share:.0%} of the scale"
    return json.dumps(reply, ensure_ascii=False)


def scripted(kind: str) -> Callable[[Any], str]:
    """A responder for the scripted backend (it is given the chat request)."""
    return lambda request: verdict(kind, request.messages[-1].content)


def served(kind: str) -> Callable[[dict[str, Any]], str]:
    """A responder for the test chat server (it is given the request body)."""
    return lambda body: verdict(kind, last_user_text(body))


def main() -> None:
    """Serve judges of known behaviour from the command line, one server each.

    `python -m gramagents.testing.judges fair gullible lengthy` prints one `--judge-model`
    spec per judge once they listen, and serves until interrupted.
    """
    import argparse
    import threading
    from contextlib import ExitStack

    from .openai_server import FakeChatServer

    parser = argparse.ArgumentParser(description="Local judges of known behaviour.")
    parser.add_argument("kinds", nargs="+", choices=KINDS)
    args = parser.parse_args()
    with ExitStack() as stack:
        for kind in args.kinds:
            server = stack.enter_context(FakeChatServer(served(kind), model=kind))
            print(f"openai:{kind}@{server.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
