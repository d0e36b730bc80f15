"""The owner of a run folder (runtime/run.py): one command at a time, resumes that check what
changed, records reconciled before anything is asked, links refused, one deletion rule."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import RunError
from gramagents.models import parse_spec
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import ChatRequest, EvalManifest, Item, PromptParts
from gramagents.runtime.run import Run, read_manifest
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.testing.drills import cli_env, drill_answer, eval_command, write_drill_dataset
from gramagents.testing.openai_server import FakeChatServer
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT

PACKAGE = ROOT / "src" / "gramagents"
TEMPLATE = "---\nvariables: [text]\n---\n{name}: {{{{ text }}}}\n"
ASKED: list[str] = []


def answer_t(request: ChatRequest) -> str:
    ASKED.append(request.messages[-1].content.split(": ", 1)[1])
    return "T"


ScriptedBackend.register("asked", answer_t)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def keep_records(folder: Path, keep: set[str]) -> None:
    """What a kill leaves: the records of the items in `keep` only."""
    for name in ("responses.jsonl", "scores.jsonl"):
        kept = [x for x in lines(folder / name) if x["item_id"] in keep]
        write_jsonl_atomic(folder / name, kept)


def two_template_dataset(root: Path) -> Path:
    """Five items rendered with `t/a.md` and five with `t/b.md` (the user's own templates)."""
    (root / "prompts" / "t").mkdir(parents=True)
    for name in "ab":
        (root / "prompts" / "t" / f"{name}.md").write_text(TEMPLATE.format(name=name))
    items = [
        Item(
            id=f"{name}{k}",
            task="SINGLE-T",
            prompt=PromptParts(template=f"t/{name}.md", vars={"text": f"{name}{k}"}),
            answer="T",
        )
        for name in "ab"
        for k in range(5)
    ]
    write_jsonl_atomic(root / "dataset.jsonl", items)
    return root / "dataset.jsonl"


def evaluate(dataset: Path, folder: Path, **options) -> EvalManifest:
    ASKED.clear()
    options = {"models": ["scripted:asked"], "use_cache": False, **options}
    return asyncio.run(run_eval(dataset, EvalOptions(run_dir=folder, **options))).manifest


def once_each(folder: Path, items: int) -> bool:
    """Each item once in the responses and once in the scores, the two agreeing."""
    responses = {(r["model"], r["item_id"]): r for r in lines(folder / "responses.jsonl")}
    scores = lines(folder / "scores.jsonl")
    return (
        len(responses) == len(lines(folder / "responses.jsonl")) == items
        and len({(s["model"], s["item_id"]) for s in scores}) == len(scores) == items
        and all(responses[s["model"], s["item_id"]]["extracted"] == s["extracted"] for s in scores)
    )


# -- what a resume checks ------------------------------------------------------------------


def test_a_resume_after_a_template_edit_is_refused_or_asks_only_what_the_edit_touches(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    first = evaluate(dataset, run)
    keep_records(run, {"a0", "a1", "a2", "a3", "a4", "b0", "b1"})  # then it was killed
    (in_tmp / "prompts" / "t" / "a.md").write_text(TEMPLATE.format(name="A, edited"))
    before = {name: (run / name).read_bytes() for name in ("responses.jsonl", "manifest.json")}

    with pytest.raises(RunError) as refused:
        evaluate(dataset, run)
    message = str(refused.value)
    assert "prompts/t/a.md" in message and "prompts/t/b.md" not in message
    assert "5 answers" in message and "--resume-changed=reask" in message
    assert {name: (run / name).read_bytes() for name in before} == before  # nothing touched
    assert ASKED == []

    resumed = evaluate(dataset, run, resume_changed="reask")
    assert sorted(ASKED) == ["a0", "a1", "a2", "a3", "a4", "b2", "b3", "b4"]  # b0, b1 kept
    assert resumed.status == "complete" and once_each(run, 10)
    (change,) = resumed.changes
    old, new = first.hashes["prompts/t/a.md"], resumed.hashes["prompts/t/a.md"]
    assert (change.input, change.before, change.after) == ("prompts/t/a.md", old, new) != old
    set_aside = lines(run / "set-aside.jsonl")
    assert len(set_aside) == resumed.set_aside == 10  # five responses, five scores
    assert {s["reason"] for s in set_aside} == {"made under inputs that have changed"}
    assert {json.loads(s["text"])["item_id"] for s in set_aside} == {f"a{k}" for k in range(5)}
    assert evaluate(dataset, run).counts.requests_sent == 0  # resumed again: nothing changed


def test_a_resume_after_a_rubric_edit_rejudges_only_that_rubric_s_items(in_tmp):
    from .test_judge import judged_dataset

    shutil.copytree(ROOT / "rubrics", in_tmp / "rubrics")
    dataset = judged_dataset(in_tmp / "dataset.jsonl")
    options = {"models": ["scripted:edu-writer"], "judge": "scripted:full-marks", "use_cache": True}
    evaluate(dataset, in_tmp / "run", **options)
    rubric = in_tmp / "rubrics" / "text-writing.md"
    rubric.write_text(rubric.read_text(encoding="utf-8").replace("rubric", "rubric (edited)", 1))
    with pytest.raises(RunError, match=r"rubrics/text-writing \(sha256 .*3 answers"):
        evaluate(dataset, in_tmp / "run", **options)
    resumed = evaluate(dataset, in_tmp / "run", resume_changed="reask", **options)
    assert resumed.judge["requests_sent"] == resumed.counts.requests_sent == 3  # EDU-TW's
    assert [c.input for c in resumed.changes] == ["rubrics/text-writing"]
    assert resumed.status == "complete" and once_each(in_tmp / "run", 5)


def test_a_server_on_another_port_is_the_same_model_and_its_answers_are_not_mixed(tmp_path):
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", 12)
    run = tmp_path / "run"

    def on(server: FakeChatServer, **options) -> EvalManifest:
        spec = f"openai:fake@{server.base_url}?timeout=5"
        return evaluate(dataset, run, models=[spec], **options)

    with FakeChatServer(responder=drill_answer) as first:
        on(first)
    keep_records(run, {f"q{i:05d}" for i in range(6)})
    with FakeChatServer(responder=drill_answer) as second:
        with pytest.raises(RunError) as refused:
            on(second)
        assert f"the endpoint of openai:fake ({first.base_url} -> {second.base_url})" in str(
            refused.value
        )
        assert second.stats()["chat_requests"] == 0
        resumed = on(second, resume_changed="reask")
        assert second.stats()["chat_requests"] == 12  # six set aside, six never answered
    assert resumed.models == ["openai:fake"] and resumed.endpoints == {
        "openai:fake": second.base_url
    }
    summary = json.loads((run / "summary.json").read_text())
    assert {row["model"] for row in summary} == {"openai:fake"} and summary[0]["n"] == 12
    assert resumed.status == "complete" and once_each(run, 12)


def test_a_model_is_named_without_its_endpoint_and_transport_options():
    spec = parse_spec("openai:m@http://127.0.0.1:8001/v1?timeout=5&temperature=0.8&http=httpx")
    assert (spec.label, spec.endpoint) == ("openai:m?temperature=0.8", "http://127.0.0.1:8001/v1")
    assert parse_spec("smollm2?temperature=0.8&seed=1").label == "smollm2?temperature=0.8&seed=1"
    assert (
        parse_spec("hf:org/name@v1?dtype=float32&batch_size=4").label
        == "hf:org/name@v1?dtype=float32"
    )


def test_a_build_rerun_after_its_recipe_changed_is_refused_or_made_anew(tmp_path):
    from .test_workflow import SINGLE_ONLY, build

    recipe = tmp_path / "single.yaml"
    recipe.write_text(SINGLE_ONLY, encoding="utf-8")
    build(tmp_path, agents=False, recipe=str(recipe))
    recipe.write_text(SINGLE_ONLY.replace("SINGLE-F: {}\n", ""), encoding="utf-8")
    with pytest.raises(RunError, match=r"changed since its records were made: recipe \(sha256"):
        build(tmp_path, agents=False, recipe=str(recipe))
    assert read_manifest(tmp_path / "build").tasks.keys() == {"SINGLE-T", "SINGLE-F"}
    from gramagents.workflow.build import BuildOptions, run_build

    from .conftest import EXAMPLE_TABLE

    options = BuildOptions(
        source=EXAMPLE_TABLE, agents=False, run_dir=tmp_path / "build", resume_changed="reask"
    )
    rebuilt = asyncio.run(run_build(str(recipe), options)).manifest
    assert rebuilt.tasks.keys() == {"SINGLE-T"} and [c.input for c in rebuilt.changes] == ["recipe"]


# -- reconciling records -------------------------------------------------------------------


def test_records_out_of_step_are_set_aside_and_their_items_asked_again(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run)
    responses, scores = lines(run / "responses.jsonl"), lines(run / "scores.jsonl")
    disagreeing = next(s for s in scores if s["item_id"] == "b1")
    write_jsonl_atomic(
        run / "responses.jsonl", [r for r in responses if r["item_id"] not in ("a0", "a1", "a2")]
    )
    write_jsonl_atomic(
        run / "scores.jsonl",
        [
            *(s for s in scores if s["item_id"] not in ("a3", "a4", "b1")),
            next(s for s in scores if s["item_id"] == "b0"),  # a repeat
            {**disagreeing, "extracted": "F"},
        ],
    )
    resumed = evaluate(dataset, run)
    assert sorted(ASKED) == ["a0", "a1", "a2", "a3", "a4", "b1"]
    assert resumed.status == "complete" and once_each(run, 10)
    reasons = sorted(s["reason"] for s in lines(run / "set-aside.jsonl"))
    assert reasons == sorted(
        ["a score without its response line"] * 3
        + ["a response without its score line"] * 3  # a3, a4, and b1's once its score went
        + [
            "repeats an earlier score",
            "disagrees with its response line (task or extracted answer)",
        ]
    )


def test_a_corrupt_line_is_one_line_naming_file_and_line_and_is_set_aside(in_tmp, caplog):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run)
    text = (run / "scores.jsonl").read_text().splitlines(keepends=True)
    broken = text[3][:40] + "\x00garbage\n"
    (run / "scores.jsonl").write_text("".join([*text[:3], broken, *text[4:]]))

    report = CliRunner().invoke(app, ["report", str(run)])
    assert report.exit_code == 2 and "Traceback" not in report.output
    assert report.output.strip().splitlines() == [
        f"error: {run / 'scores.jsonl'}:4: not a JSON record (a damaged line)"
    ]
    with caplog.at_level(logging.WARNING, logger="gramagents.run"):
        resumed = evaluate(dataset, run)
    warned = [r.getMessage() for r in caplog.records if "scores.jsonl" in r.getMessage()]
    assert warned == [f"{run / 'scores.jsonl'}:4: not a JSON record; set aside in set-aside.jsonl"]
    assert len(ASKED) == 1 and resumed.status == "complete" and once_each(run, 10)
    kept = [s for s in lines(run / "set-aside.jsonl") if s["file"] == "scores.jsonl"]
    assert [(s["line"], s["text"]) for s in kept] == [(4, broken.rstrip("\n"))]


def test_symlinked_records_and_folders_are_refused(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run)
    keep_records(run, {"a0"})  # a resume would have lines to cut and append
    elsewhere = in_tmp / "elsewhere.jsonl"
    shutil.move(run / "scores.jsonl", elsewhere)
    (run / "scores.jsonl").symlink_to(elsewhere)
    target = elsewhere.read_bytes()
    with pytest.raises(RunError, match=r"scores.jsonl: is a symbolic link \(to .*elsewhere"):
        evaluate(dataset, run)
    assert elsewhere.read_bytes() == target
    (in_tmp / "alias").symlink_to(run)
    with pytest.raises(RunError, match="alias: is a symbolic link"):
        Run.existing(in_tmp / "alias")
    viewed = CliRunner().invoke(app, ["view", str(in_tmp / "alias")])
    assert viewed.exit_code == 2 and "is a symbolic link" in viewed.output


# -- one owner -----------------------------------------------------------------------------


def test_a_held_folder_refuses_another_command_at_once_naming_the_holder(tmp_path):
    with Run.open(tmp_path / "run", "eval") as held:
        with pytest.raises(RunError) as second:
            Run.open(tmp_path / "run", "eval")
        assert f"in use by another gramagents command (pid {os.getpid()} since " in str(
            second.value
        )
        assert str(second.value).startswith(f"{tmp_path / 'run'}: ")
        # the same process may show the folder it holds (an eval writing its viewer)
        with pytest.raises(RunError, match="no manifest.json"):
            Run.existing(held.path)
        assert (held.path / ".lock.pid").is_file()
    assert not (tmp_path / "run" / ".lock.pid").exists()
    Run.open(tmp_path / "run", "eval").close()  # let go: free again


def test_the_lock_goes_with_a_killed_holder(tmp_path):
    folder = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from gramagents.runtime.run import Run; "
            "Run.open(sys.argv[1], 'eval'); print('held', flush=True); time.sleep(120)",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PACKAGE.parent)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunError, match=f"pid {holder.pid} since"):
            Run.open(folder, "eval")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    Run.open(folder, "eval").close()


@pytest.mark.slow
def test_three_evals_at_once_on_one_folder_one_runs_and_two_stop(tmp_path):
    items = 40
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", items)
    run, env = tmp_path / "run", cli_env(tmp_path / "cache.sqlite")
    with FakeChatServer(responder=drill_answer, delay=3.0) as server:
        command = eval_command(dataset, server.base_url, run, concurrency=2, timeout=None)
        first = subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while server.stats()["chat_requests"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # the first eval holds the folder and is asking
        others = [
            subprocess.Popen(command, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        stopped = [p.communicate(timeout=120)[1] for p in others]
        server.delay = 0.0
        first.communicate(timeout=120)
        asked = server.stats()["chat_requests"]
    assert first.returncode == 0 and [p.returncode for p in others] == [2, 2]
    for stderr in stopped:
        assert stderr.strip().splitlines() == [stderr.strip()]  # one line
        assert re.match(
            rf"error: {re.escape(str(run))}: in use by another gramagents command "
            rf"\(pid {first.pid} since [^)]*eval[^)]*\); wait for it to end",
            stderr,
        ), stderr
    assert asked == items and once_each(run, items)
    assert read_manifest(run).status == "complete"


# -- how a command ends --------------------------------------------------------------------


def test_a_failed_eval_removes_only_a_folder_it_made_and_wrote_nothing_into(in_tmp, monkeypatch):
    import gramagents.workflow.eval as eval_module

    dataset = two_template_dataset(in_tmp)

    async def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(eval_module, "_evaluate", stopped)
        with pytest.raises(KeyboardInterrupt):
            evaluate(dataset, in_tmp / "new")
    assert not (in_tmp / "new").exists()

    evaluate(dataset, in_tmp / "run")
    keep_records(in_tmp / "run", {"a0"})

    async def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(eval_module, "_evaluate", broken)
    with pytest.raises(RuntimeError):
        evaluate(dataset, in_tmp / "run")
    manifest = read_manifest(in_tmp / "run")
    assert (manifest.status, manifest.reason) == ("partial", "RuntimeError: disk on fire")
    # nothing was asked, so nothing failed: the nine are not asked, for the resume to ask
    assert (manifest.counts.failed, manifest.counts.not_asked) == (0, 9)
    assert once_each(in_tmp / "run", 1)


def test_one_place_reads_manifests_and_one_constructs_the_cache():
    sources = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}
    readers = {
        p.relative_to(PACKAGE).as_posix() for p, s in sources.items() if '"manifest.json"' in s
    }
    caches = {
        p.relative_to(PACKAGE).as_posix() for p, s in sources.items() if "ResponseCache(" in s
    }
    assert readers == {"runtime/run.py"} and caches == {"runtime/cache.py"}


def test_manifests_are_typed_by_kind_and_those_written_before_still_read(tmp_path):
    eval_fields = {"dataset": None, "conditioning": {}, "random_baselines": {}, "judge": None}
    build_fields = {"source": None, "agents": None, "stages": {}, "review": None}
    common = {"run_id": "old", "command": [], "seed": 1, "status": "complete"}
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({**common, "kind": "build", **build_fields, **eval_fields}))
    assert type(read_manifest(tmp_path)).__name__ == "BuildManifest"
    manifest.write_text(json.dumps({**common, "kind": "eval", **build_fields, **eval_fields}))
    assert type(read_manifest(tmp_path)).__name__ == "EvalManifest"
    manifest.write_text(json.dumps({**common, "kind": "eval", "source": {"path": "x"}}))
    with pytest.raises(RunError, match="unreadable manifest .field 'eval.source': Extra inputs"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_every_file_and_folder_a_run_writes_has_the_mode_its_umask_gives(in_tmp, mask):
    """Records appended, files written whole (manifest, summary, report, the viewer), the
    lock, records rewritten by a resume and lines set aside: one mode for all of them, the one
    `open` and `mkdir` give under the umask (atomic writes used to make theirs private)."""
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    earlier = os.umask(mask)
    try:
        evaluate(dataset, run)
        keep_records(run, {"a0", "a1"})
        with (run / "scores.jsonl").open("a", encoding="utf-8") as scores:
            scores.write('{"damaged\n')  # set aside by the resume
        evaluate(dataset, run)
    finally:
        os.umask(earlier)
    modes = {p.relative_to(run).as_posix(): p.stat().st_mode & 0o777 for p in run.rglob("*")}
    files = {name: mode for name, mode in modes.items() if (run / name).is_file()}
    folders = {name: mode for name, mode in modes.items() if (run / name).is_dir()}
    assert {"manifest.json", "report.md", "report.html", "set-aside.jsonl", ".lock"} <= set(files)
    assert "view" in folders
    assert {name: mode for name, mode in files.items() if mode != 0o666 & ~mask} == {}
    assert {name: mode for name, mode in folders.items() if mode != 0o777 & ~mask} == {}
