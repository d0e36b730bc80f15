"""Fault and kill drills: the pieces `bench/faults.py` and the reliability tests share.

A drill runs the real command line (`python -m gramagents eval|build`) in a subprocess
against the test chat server (testing/openai_server.py) in this process, and then checks the
run folder it left: every item recorded once, the same records as an undisturbed run, and,
for kill drills, that no request whose answer was already recorded reached the server again.

    server = FakeChatServer(responder=drill_answer)
    dataset = write_drill_dataset(tmp / "dataset.jsonl", 200)
    cmd = eval_command(dataset, server.base_url, tmp / "run")
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import Item, PromptParts
from ..runtime.retry import RetryPolicy
from ..runtime.run import read_manifest
from ..runtime.rundir import write_jsonl_atomic
from .faults import PLAN_KINDS, FaultPlan, body_digest, wants_structured
from .openai_server import FakeChatServer, last_user_text

ITEM_ID = re.compile(r"\bitem (q\d+)\b")
TAG = re.compile(r"#([0-9a-f]{12})\b")

_SENTENCES = [
    ("She can swim.", "can"),
    ("他把书放在桌子上了。", "把"),
    ("We have lived here for ten years.", "present perfect"),
    ("我吃过北京烤鸭。", "过"),
    ("If it rains, we will stay at home.", "first conditional"),
    ("这本书比那本书有意思。", "比"),
]


def write_drill_dataset(path: Path, count: int) -> Path:
    """`count` SINGLE-T items, each prompt naming its item id (`item q00017`)."""
    items = []
    for i in range(count):
        sentence, point = _SENTENCES[i % len(_SENTENCES)]
        text = (
            f"Question for item q{i:05d}: does the sentence '{sentence}' show the grammar point "
            f"[{point}]? Answer T or F."
        )
        prompt = PromptParts(template="raw.md", vars={"text": text})
        items.append(Item(id=f"q{i:05d}", task="SINGLE-T", prompt=prompt, answer="T"))
    write_jsonl_atomic(path, items)
    return path


def drill_answer(body: dict[str, Any]) -> str:
    """A fixed answer per prompt: T, F, T in a sentence, or one that cannot be read."""
    text = last_user_text(body)
    return ["T", "F", "答案：T", "I am not sure."][sum(map(ord, text)) % 4]


def item_of(body: dict[str, Any]) -> str:
    """The item id a drill prompt names ('' for other requests)."""
    found = ITEM_ID.search(last_user_text(body))
    return found.group(1) if found else ""


def tag_of(body: dict[str, Any]) -> str:
    """A short digest of a request body, which tagged answers carry (`#0123456789ab`)."""
    return body_digest(body)[:12]


def eval_command(
    dataset: Path,
    base_url: str,
    run_dir: Path,
    *,
    concurrency: int = 8,
    timeout: float | None = 1.0,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """`gramagents eval` of `dataset` on the chat server at `base_url`.

    `timeout`: the client's, in seconds (None: its default).
    """
    return [
        sys.executable,
        "-m",
        "gramagents",
        "eval",
        str(dataset),
        "--model",
        f"openai:fake@{base_url}" + ("" if timeout is None else f"?timeout={timeout:g}"),
        "--run-dir",
        str(run_dir),
        "--concurrency",
        str(concurrency),
        *extra,
    ]


def cli_env(cache: Path, **extra: str) -> dict[str, str]:
    """The environment of a drill's command: its own response cache, offline."""
    env = {**os.environ, "GRAMAGENTS_CACHE": str(cache), "HF_HUB_OFFLINE": "1", **extra}
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def run_cli(
    cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end, its output captured."""
    return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def run_measured(
    cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 600
) -> tuple[int, str, int]:
    """Run a command to its end: its exit code, its stderr, and its peak memory in bytes.

    The peak is the most resident memory the process held, as the kernel counted it (`wait4`).
    """
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return process.returncode, err.read().decode(errors="replace"), usage.ru_maxrss * 1024


def jsonl_lines(path: Path) -> list[str]:
    """The lines of a JSONL file (none when it does not exist)."""
    if not path.exists():
        return []
    return path.read_text(encoding="utf-8").splitlines()


def recorded_items(run_dir: Path) -> set[str]:
    """Item ids an eval run folder has an answer for (responses and scores)."""
    found = set()
    for name in ("responses.jsonl", "scores.jsonl"):
        for line in jsonl_lines(run_dir / name):
            try:
                found.add(json.loads(line)["item_id"])
            except (ValueError, KeyError):
                continue  # a partial last line left by the kill
    return found


def cached_tags(cache: Path) -> set[str]:
    """Tags of the answers a response cache holds (see `tag_of`)."""
    if not cache.exists():
        return set()
    db = sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=30)
    try:
        return {
            t for (value,) in db.execute("SELECT value FROM answers") for t in TAG.findall(value)
        }
    except sqlite3.OperationalError:  # killed before the table existed
        return set()
    finally:
        db.close()


# -- the retry budget ----------------------------------------------------------------------


def implied_requests(
    plan: FaultPlan, bodies: list[dict[str, Any]], policy: RetryPolicy
) -> tuple[int, int]:
    """(requests, lost): what `plan` and `policy` make of a fault-free run's request bodies.

    A plain request is sent again with the same body, so its fate is a pure function of the
    plan: draws until one is answered, or until the policy's attempts run out (then the item is
    lost). A structured request failed as `invalid` is re-asked with a different body; it counts
    as one request here and the re-ask's draws are not followed, so for structured requests the
    figure is a lower bound.
    """
    total = lost = 0
    for body in bodies:
        digest, structured = body_digest(body), wants_structured(body)
        limited = transient = 0
        for seen in range(10_000):
            total += 1
            fault = plan.choose(digest, seen, structured)
            if fault is None or fault.kind == "invalid":
                break
            if fault.kind == "429":
                limited += 1
                out = limited >= policy.max_rate_limit_attempts
            else:
                transient += 1
                out = transient >= policy.max_attempts
            if out:
                lost += 1
                break
    return total, lost


# -- kill and resume -----------------------------------------------------------------------


@dataclass
class KillReport:
    """What a kill-and-resume drill did and what it saw."""

    kills: int = 0
    """How many times the command was killed (a run that ended before its kill point is not)."""
    points: list[int] = field(default_factory=list)
    """Requests the server had received (in all) at each kill."""
    asked_again: list[str] = field(default_factory=list)
    """Tags of answers recorded before a kill that the server was asked for after it."""
    last: subprocess.CompletedProcess[str] | None = None
    """The final, uninterrupted run."""


@dataclass(frozen=True)
class KillPlan:
    """Where a kill-and-resume drill kills its command, and how it reads what was recorded."""

    kills: int
    expected_requests: int
    """About how many chat requests an undisturbed run sends; kill points spread over them."""
    recorded: Callable[[], set[str]]
    """Tags of the answers the run folder (or cache) holds now."""
    tag: Callable[[dict[str, Any]], str]
    """The tag of a request body, comparable with `recorded`'s."""
    seed: int = 0
    timeout: float = 600
    """Seconds for the whole drill."""


def kill_and_resume(
    cmd: list[str], env: dict[str, str], cwd: Path, server: FakeChatServer, plan: KillPlan
) -> KillReport:
    """SIGKILL `cmd` at `plan.kills` random points, re-run it after each, then run it to the end.

    A kill point is a number of chat requests the server has received, drawn so that the
    points spread over a run of about `plan.expected_requests` requests. After each kill,
    `plan.recorded()` names the answers held; a request the server receives later whose
    `plan.tag` is among them is reported in `asked_again`.
    """
    rng = random.Random(plan.seed)
    report = KillReport()
    marks: list[tuple[int, set[str]]] = []
    step = max(2, plan.expected_requests // (plan.kills + 1))
    deadline = time.monotonic() + plan.timeout
    for _ in range(plan.kills):
        target = server.stats()["chat_requests"] + rng.randint(1, step)
        if _kill_at(cmd, env, cwd, server, target, deadline):
            report.kills += 1
        received = len(server.chat_requests())
        report.points.append(received)
        marks.append((received, plan.recorded()))
    report.last = run_cli(cmd, env, cwd, timeout=max(1.0, deadline - time.monotonic()))
    bodies = server.chat_requests()
    for mark, held in marks:
        later = {plan.tag(b) for b in bodies[mark:]}
        report.asked_again.extend(sorted(held & later))
    return report


def _kill_at(
    cmd: list[str],
    env: dict[str, str],
    cwd: Path,
    server: FakeChatServer,
    target: int,
    deadline: float,
) -> bool:
    """Run `cmd` until the server has received `target` chat requests, then SIGKILL it.

    Returns:
        Whether it was killed (False: it ended on its own first).
    """
    process = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while process.poll() is None and server.stats()["chat_requests"] < target:
        if time.monotonic() > deadline:
            process.kill()
            raise TimeoutError("the drill's command ran past its time")
        time.sleep(0.002)
    killed = process.poll() is None
    if killed:
        process.send_signal(signal.SIGKILL)
    process.wait()
    return killed


def fault_plan(
    rate: float, seed: int, hang_s: float, kinds: tuple[str, ...] = PLAN_KINDS
) -> FaultPlan:
    """A plan over `kinds` whose 429s ask for a short wait."""
    return FaultPlan(rate=rate, kinds=kinds, seed=seed, retry_after=0.05, hang_s=hang_s)


# -- checking a run folder against an undisturbed one --------------------------------------


@dataclass
class RunCheck:
    """An eval run folder compared with an undisturbed run of the same dataset."""

    items: int
    survived: int
    """Items with a score and no failure record."""
    duplicated: int
    """Response or score lines beyond the first for the same (model, item)."""
    identical: bool
    """The same score lines and the same summary as the undisturbed run."""
    status: str

    @property
    def lost(self) -> int:
        """Items without a score, or with a failure record."""
        return self.items - self.survived


def check_run(reference: Path, run_dir: Path, items: int) -> RunCheck:
    """Compare `run_dir` with the undisturbed run in `reference` (both evals of `items`)."""
    scores = jsonl_lines(run_dir / "scores.jsonl")
    keyed = [_key(line) for line in scores]
    responses = [_key(line) for line in jsonl_lines(run_dir / "responses.jsonl")]
    failed = {_key(line) for line in jsonl_lines(run_dir / "failures.jsonl")}
    duplicated = (len(keyed) - len(set(keyed))) + (len(responses) - len(set(responses)))
    survived = len(set(keyed) - failed)
    same_scores = sorted(scores) == sorted(jsonl_lines(reference / "scores.jsonl"))
    summary, ref_summary = run_dir / "summary.json", reference / "summary.json"
    same_summary = summary.exists() and summary.read_text(
        encoding="utf-8"
    ) == ref_summary.read_text("utf-8")
    manifest = read_manifest(run_dir)
    status = manifest.status if manifest is not None else "missing"
    return RunCheck(items, survived, duplicated, same_scores and same_summary, status)


def _key(line: str) -> tuple[str, str]:
    record = json.loads(line)
    return record["model"], record["item_id"]
