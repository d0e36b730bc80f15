"""How long a one-line error takes, and what the CLI imports to give it.

Runs each command `--rounds` times in fresh interpreters and prints the median wall time side
by side with the eager start the CLI used to make (every recipe package imported for its
subcommands, then the build workflow and its libraries imported before the recipe was looked
up), emulated in the same run so that both columns share the machine's load. For each command
it also lists the heavy libraries and recipe modules the process ended up importing, and the
slowest imports of `python -X importtime` (cumulative microseconds).

    python bench/startup.py [--rounds 5]

Target: `gramagents build nope` answers, one line and a non-zero exit, in under 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 1.5
HEAVY = (
    "torch",
    "transformers",
    "langgraph",
    "langchain_core",
    "spacy",
    "sentence_transformers",
    "altair",
    "pandas",
    "numpy",
    "openai",
    "datasets",
    "pyarrow",
)
COMMANDS = (
    ("build nope", ["build", "nope"]),
    ("build nope --source x", ["build", "nope", "--source", "x"]),
    ("rubric check nope", ["rubric", "check", "nope"]),
    ("--help", ["--help"]),
)
# The start the CLI made before it was made lazy: every recipe imported for its subcommands,
# and the build workflow imported before the recipe name was looked at.
EAGER = "import gramagents.cli as cli, gramagents.workflow.build\ncli.add_recipe_commands()\n"
PROBE = (
    "import sys\n"
    "sys.argv = ['gramagents', *{args!r}]\n"
    "{prelude}"
    "from gramagents.cli import main\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    heavy = sorted(m for m in {heavy!r} if m in sys.modules)\n"
    "    recipes = sorted({{m.split('.')[2] for m in sys.modules\n"
    "                      if m.startswith('gramagents.recipes.') and m.count('.') >= 2}})\n"
    "    print('LOADED', heavy, recipes, file=sys.stderr)\n"
)


def _env() -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "100"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    return env


def _once(args: list[str], eager: bool, cwd: str, importtime: bool = False) -> tuple[float, str]:
    code = PROBE.format(args=args, prelude=EAGER if eager else "", heavy=HEAVY)
    flags = ["-X", "importtime"] if importtime else []
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *flags, "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True
    )
    return time.perf_counter() - start, done.stderr


def _loaded(stderr: str) -> str:
    line = next((x for x in stderr.splitlines() if x.startswith("LOADED ")), "LOADED ?")
    return line.removeprefix("LOADED ")


def _slowest(stderr: str, n: int = 5) -> list[str]:
    """The top-level imports (as `-X importtime` indents them) with the largest cumulative time."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if cumulative.strip().isdigit() and not name[1:].startswith("  "):
            rows.append((int(cumulative), name.strip()))
    return [f"{name} {us / 1000:.0f} ms" for us, name in sorted(rows, reverse=True)[:n]]


def measure(label: str, args: list[str], rounds: int, cwd: str) -> bool:
    """Print lazy and eager medians of one command; True if the lazy start meets the target."""
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for eager in (False, True):  # interleaved: both see the same spells of load
            times[eager].append(_once(args, eager, cwd)[0])
    lazy, eager = (statistics.median(times[k]) for k in (False, True))
    _, lazy_err = _once(args, False, cwd, importtime=True)
    _, eager_err = _once(args, True, cwd, importtime=True)
    print(f"gramagents {label}")
    print(f"  lazy  {lazy:5.2f} s (min {min(times[False]):.2f})  loaded {_loaded(lazy_err)}")
    print(f"  eager {eager:5.2f} s (min {min(times[True]):.2f})  loaded {_loaded(eager_err)}")
    print(f"  slowest imports, lazy:  {', '.join(_slowest(lazy_err))}")
    print(f"  slowest imports, eager: {', '.join(_slowest(eager_err))}")
    return lazy < TARGET_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    print(f"load average {os.getloadavg()[0]:.1f}; median of {rounds} fresh interpreters each")
    with tempfile.TemporaryDirectory() as cwd:
        (Path(cwd) / "graphs").mkdir()  # the packaged recipes only; nothing is written
        results = {label: measure(label, args, rounds, cwd) for label, args in COMMANDS}
    verdict = "pass" if results["build nope"] else "fail"
    print(f"target: 'build nope' under {TARGET_S} s: {verdict}")


if __name__ == "__main__":
    main()
