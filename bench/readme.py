"""Every command the README and the documentation show, run as a new user would, timed.

Reads the `bash` blocks of README.md and of every page of the documentation (in the order
mkdocs.yml lists them) and runs, in that order, each command that works on the shipped
examples: `gramagents ...` and `python <repo file>` lines (a trailing `# about 2 min` or
`# under 10 min` is the time the page states for it). Each runs in a fresh process from
the repository's root, its `runs/...` folders in a temporary folder (a `python` script runs
in that folder, so that what it writes under `runs/` lands there too); the commands share one
response cache, empty when the first starts, as a user's own would be (so a command that asks
what an earlier one asked, such as the grammar-book build from the PDF after the one from
markdown, finds those answers cached). A command that a page repeats word for word (the
documentation's home page repeats the README's) runs once, where it first appears.
Set-up commands (`scripts/setup`, `pip`, `source`, pytest) are not run (this runs in the
set-up environment); commands with a placeholder (`RUN`, `<eval>`, `MY_MODEL`, `[...]`), a
model from a hub or a server of your own, a file of your own, or `--serve` (it serves until
interrupted) are listed as not run, with why. Every command is named by its page and line.

For each command it prints the wall time, the peak resident memory (the kernel's count,
`wait4`'s `ru_maxrss`), the stated time and whether the command kept to it ("about T":
within 1.25 T; "under T": below T), and the machine's load average before and after; then
the issue's targets (quick start eval < 150 s, EduEval example eval with --limit 1 < 180 s,
grammar-book build with agents on < 600 s), ending with one RESULT line.

    python bench/readme.py [--only SUBSTRING ...] [--list]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATED = re.compile(r"#\s*(about|under)\s+(\d+(?:\.\d+)?)\s*(s|min)\b")
PLACEHOLDER = re.compile(r"<[^>]+>|\[[^\]]*\]|\b(?:RUN|DIR|DATASET|SPEC|FILE|FOLDER|MY_MODEL)\b")
SET_UP = ("scripts/setup", "source ", "python3 -m venv", "pip ", ".venv/bin/pip", "apt-get")
TARGETS = {
    "quick start eval": ("eval runs/example-build", 150.0),
    "EduEval example eval --limit 1": ("eval runs/edu-build --limit 1", 180.0),
    "grammar-book build, agents on": ("--source examples/grammar-book/book.md", 600.0),
}


@dataclass
class Command:
    """One command of a page and the time the page states for it."""

    text: str
    line: int
    stated: tuple[str, float] | None
    skip: str | None = None
    page: str = "README"

    @property
    def where(self) -> str:
        """`PAGE:LINE`."""
        return f"{self.page}:{self.line}"


def _blocks(readme: str) -> list[tuple[int, str]]:
    """(line, text) of every logical line in the README's bash blocks."""
    lines, inside, logical, start = [], False, "", 0
    for number, raw in enumerate(readme.splitlines(), 1):
        if raw.startswith("```"):
            inside = raw.strip() == "```bash"
            continue
        if not inside:
            continue
        if raw[:1].isspace() and not logical and lines:  # a synopsis's second line
            lines[-1] = (lines[-1][0], f"{lines[-1][1]} {raw.strip()}")
            continue
        if not logical:
            start = number
        if raw.rstrip().endswith("\\"):
            logical += raw.rstrip()[:-1] + " "
            continue
        lines.append((start, logical + raw))
        logical = ""
    return lines


def readme_commands(readme: str, page: str = "README") -> list[Command]:
    """The commands of a page's bash blocks, with their stated times and skip reasons."""
    commands = []
    for line, text in _blocks(readme):
        found = STATED.search(text)
        stated = None
        if found:
            amount = float(found.group(2)) * (60 if found.group(3) == "min" else 1)
            stated = (found.group(1), amount)
        code = text.split("  #", 1)[0].split(" # ", 1)[0].strip()
        for part in (p.strip() for p in code.split("&&")):
            if not part:
                continue
            commands.append(Command(part, line, stated, _why_not(part), page))
    return commands


def pages() -> list[tuple[str, Path]]:
    """README.md, then the documentation's pages in the order mkdocs.yml lists them."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("!!", "#"))

    def listed(nav: list) -> list[str]:
        found = []
        for entry in nav:
            for value in entry.values():
                found += listed(value) if isinstance(value, list) else [value]
        return found

    docs = [(f"docs/{name}", ROOT / "docs" / name) for name in listed(config["nav"])]
    return [("README", ROOT / "README.md"), *docs]


def all_commands() -> list[Command]:
    """Every page's commands, a command repeated word for word marked as run where it came
    first."""
    commands: list[Command] = []
    first: dict[str, Command] = {}
    made: set[str] = set()
    for page, path in pages():
        for command in readme_commands(path.read_text(encoding="utf-8"), page):
            key = command.text.removeprefix(".venv/bin/")
            earlier = first.setdefault(key, command)
            if earlier is not command and command.skip is None:
                command.skip = f"as {earlier.where}"
            words = shlex.split(command.text)
            needed = [w for w in words[1:] if w.startswith("runs/") and w.split("/")[1] not in made]
            if command.skip is None and needed and "--run-dir" not in words:
                command.skip = f"needs {needed[0]}, which a command not run here makes"
            if command.skip is None and "--run-dir" in words:
                made.add(words[words.index("--run-dir") + 1].split("/")[1])
            commands.append(command)
    return commands


def _why_not(command: str) -> str | None:
    if command.startswith(SET_UP) or "pytest" in command:
        return "set-up (this runs in the set-up environment)"
    if not command.startswith(("gramagents ", ".venv/bin/gramagents ", "python ", ".venv/bin/")):
        return "not a gramagents command"
    if PLACEHOLDER.search(command):
        return "placeholder to fill in"
    if "hf:" in command and "hf:./" not in command:
        return "model from a hub (no network here)"
    if "http://" in command or "https://" in command:
        return "a model server of your own"
    if "--serve" in command.split():
        return "serves until interrupted"
    return None


def _argv(command: str, scratch: Path) -> tuple[list[str], Path]:
    """The command's argument vector and the folder it runs in."""
    words = [w.replace("runs/", f"{scratch}/runs/", 1) for w in shlex.split(command)]
    if words[0].endswith("gramagents"):
        return [sys.executable, "-m", "gramagents", *words[1:]], ROOT
    script = [str(ROOT / words[1]) if (ROOT / words[1]).is_file() else words[1], *words[2:]]
    return [sys.executable, *script], scratch


@dataclass
class Outcome:
    """How one command went."""

    wall_s: float
    rss_mb: float
    status: int
    tail: list[str]
    load: tuple[float, float]
    progress_lines: int


def run(command: Command, scratch: Path) -> Outcome:
    """Run one command; its wall time, peak RSS, exit status and last lines."""
    env = {**os.environ, "GRAMAGENTS_CACHE": str(scratch / "cache.sqlite")}
    log = scratch / "output.log"
    load = os.getloadavg()[0]
    started = time.perf_counter()
    argv, folder = _argv(command.text, scratch)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(argv, cwd=folder, env=env, stdout=sink, stderr=sink)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    output = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return Outcome(
        wall_s=wall,
        rss_mb=usage.ru_maxrss / 1024,  # Linux counts kilobytes
        status=os.waitstatus_to_exitcode(status),
        tail=output[-3:],
        load=(load, os.getloadavg()[0]),
        progress_lines=sum(1 for x in output if re.search(r": \d+/\d+ \(\d+ %\)", x)),
    )


def _verdict(stated: tuple[str, float] | None, wall: float) -> str:
    if stated is None:
        return "no time stated"
    how, limit = stated
    bound = limit * 1.25 if how == "about" else limit
    return f"{'kept' if wall <= bound else 'OVER'} ({how} {limit:.0f} s)"


def main() -> None:
    """Run the pages' commands and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="run commands containing these")
    parser.add_argument("--list", action="store_true", help="list the commands and stop")
    args = parser.parse_args()
    commands = all_commands()
    if args.list:
        for c in commands:
            print(f"{c.where}  {c.text}  [{c.skip or c.stated or 'run'}]")
        return
    results: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for c in commands:
            if c.skip or (args.only and not any(o in c.text for o in args.only)):
                print(f"not run  {c.where}  {c.text}  ({c.skip or 'not in --only'})")
                continue
            got = results[c.text] = run(c, scratch)
            print(
                f"{'ok' if got.status == 0 else 'FAILED'}  {c.where}  {c.text}\n"
                f"    {got.wall_s:.1f} s, peak RSS {got.rss_mb:.0f} MB, "
                f"{_verdict(c.stated, got.wall_s)}, load average {got.load[0]:.1f} -> "
                f"{got.load[1]:.1f}, {got.progress_lines} progress lines; last: {got.tail[-1:]}",
                flush=True,
            )
    _summary(commands, results)


def _summary(commands: list[Command], results: dict[str, Outcome]) -> None:
    failed = [text for text, got in results.items() if got.status != 0]
    over = [
        c.text
        for c in commands
        if c.text in results and _verdict(c.stated, results[c.text].wall_s).startswith("OVER")
    ]
    figures = []
    for name, (needle, limit) in TARGETS.items():
        found = next((g for text, g in results.items() if needle in text), None)
        if found is None:
            figures.append(f"{name} not run")
            continue
        verdict = "pass" if found.wall_s < limit else "FAIL"
        figures.append(f"{name} {found.wall_s:.0f} s ({verdict} < {limit:.0f})")
    print(
        f"RESULT readme: {len(results) - len(failed)}/{len(results)} commands finished, "
        f"{len(over)} over their page's time; " + "; ".join(figures)
    )


if __name__ == "__main__":
    main()
