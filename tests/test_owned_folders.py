"""Folders gramagents owns, and only those: `view --out`, links in run folders, `agree`,
`export` and `view --serve`.

Each test is an attack that worked before: `view --out` emptied a user's `view/` folder beside
any `manifest.json` and wrote into a run folder an eval held; a resume truncated a file a hard
link shared; `agree` read `scores.jsonl` through a symbolic link and took no lock; `export`
into a symbolic link ended in a traceback; `view --serve` served a link inside `view/` that
led to the run's `responses.jsonl`.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.errors import RunError
from gramagents.report.view import write_view
from gramagents.report.view.serve import make_server

from .test_agreement import make_run, ratings, write_humans
from .test_export import odd_build
from .test_run_folder import evaluate, keep_records, two_template_dataset
from .test_view import hand_run  # noqa: F401 - a fixture

PACKAGE = Path(__file__).resolve().parent.parent / "src"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (links as what they point to), by relative path."""
    return {
        str(p.relative_to(folder)): (os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() or p.is_symlink()
    }


def one_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


class Holder:
    """Another process holding a run folder's lock, as a running command does."""

    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, time; from gramagents.runtime.run import Run; "
                "Run.existing(sys.argv[1]); print('held', flush=True); time.sleep(120)",
                str(folder),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(PACKAGE)},
        )
        assert self.process.stdout.readline().strip() == "held"

    def __enter__(self) -> Holder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


# --- view --out ---------------------------------------------------------------------------------


def test_view_out_on_a_folder_it_did_not_write_leaves_every_file_as_it_was(hand_run, tmp_path):  # noqa: F811
    mine = tmp_path / "mine"
    (mine / "view").mkdir(parents=True)
    (mine / "manifest.json").write_text('{"any": "json of mine"}\n')
    (mine / "view" / "notes.txt").write_text("my own notes\n")
    (mine / "view" / "app.js").write_text("// my own script\n")
    (mine / "report.html").write_text("my own page\n")
    before = snapshot(mine)
    line = one_error(CliRunner().invoke(app, ["view", str(hand_run), "--out", str(mine)]))
    assert line.startswith(f"error: --out {mine}: holds files gramagents view did not write")
    assert snapshot(mine) == before
    (mine / "report.html").unlink()  # without a page: still not ours
    before = snapshot(mine)
    one_error(CliRunner().invoke(app, ["view", str(hand_run), "--out", str(mine)]))
    assert snapshot(mine) == before


def test_view_out_writes_into_an_empty_folder_and_then_its_own_site_again(hand_run, tmp_path):  # noqa: F811
    site = tmp_path / "site"
    site.mkdir()
    runner = CliRunner()
    assert runner.invoke(app, ["view", str(hand_run), "--out", str(site)]).exit_code == 0
    (site / "notes.txt").write_text("beside the site")
    assert runner.invoke(app, ["view", str(hand_run), "--out", str(site)]).exit_code == 0
    assert (site / "notes.txt").read_text() == "beside the site"
    assert (site / "view" / "site.json").is_file()


def test_view_out_into_a_run_folder_another_command_holds_is_refused(hand_run, tmp_path):  # noqa: F811
    other = tmp_path / "other"
    shutil.copytree(hand_run, other)
    write_view([other])  # the other run's own site: ours to replace, but not while it is held
    before = snapshot(other)
    with Holder(other) as holder:
        line = one_error(CliRunner().invoke(app, ["view", str(hand_run), "--out", str(other)]))
        assert f"in use by another gramagents command (pid {holder.process.pid}" in line
        assert snapshot(other) == {**before, ".lock": b"", **_pid_file(other)}
    assert CliRunner().invoke(app, ["view", str(hand_run), "--out", str(other)]).exit_code == 0


def _pid_file(folder: Path) -> dict[str, bytes]:
    pid = folder / ".lock.pid"
    return {".lock.pid": pid.read_bytes()} if pid.exists() else {}


# --- links in run folders -----------------------------------------------------------------------


def test_a_hard_link_in_a_run_folder_is_refused_and_its_other_name_left_whole(in_tmp):
    dataset = two_template_dataset(in_tmp)
    run = in_tmp / "run"
    evaluate(dataset, run)
    keep_records(run, {"a0", "a1"})
    with (run / "responses.jsonl").open("ab") as handle:
        handle.write(b'{"model": "scripted:asked", "item_id": "a2", "cut off by a ki')
    shared = in_tmp / "my-copy.jsonl"
    os.link(run / "responses.jsonl", shared)
    before = shared.read_bytes()
    with pytest.raises(RunError, match=r"responses.jsonl: is a hard link \(the file has 2 names\)"):
        evaluate(dataset, run)
    assert shared.read_bytes() == before  # nothing cut, nothing appended
    line = one_error(CliRunner().invoke(app, ["report", str(run)]))
    assert "responses.jsonl: is a hard link" in line
    shared.unlink()
    assert evaluate(dataset, run).status == "complete"


def test_a_link_at_any_depth_of_a_run_folder_is_refused(hand_run, tmp_path):  # noqa: F811
    write_view([hand_run])
    outside = tmp_path / "outside.txt"
    outside.write_text("elsewhere")
    deep = hand_run / "view" / "data" / "run0" / "items" / "linked.js"
    deep.symlink_to(outside)
    line = one_error(CliRunner().invoke(app, ["view", str(hand_run)]))
    assert line == (
        f"error: {deep}: is a symbolic link (to {outside}); a run folder's files must be its "
        "own, not links elsewhere"
    )
    deep.unlink()
    os.link(outside, deep)
    assert "is a hard link" in one_error(CliRunner().invoke(app, ["report", str(hand_run)]))
    assert outside.read_text() == "elsewhere"


# --- agree ----------------------------------------------------------------------------------------


def test_agree_refuses_a_symlinked_scores_file_and_a_held_folder(tmp_path):
    judge, rows = ratings(n=10, raters="ab")
    run = make_run(tmp_path / "run", {"m1": judge})
    humans = write_humans(tmp_path / "humans.csv", rows)
    elsewhere = tmp_path / "elsewhere.jsonl"
    shutil.move(run / "scores.jsonl", elsewhere)
    (run / "scores.jsonl").symlink_to(elsewhere)
    args = ["agree", str(run), "--human", str(humans), "--boot", "0"]
    line = one_error(CliRunner().invoke(app, args))
    assert line.startswith(f"error: {run / 'scores.jsonl'}: is a symbolic link")
    assert not (run / "agreement.json").exists()
    (run / "scores.jsonl").unlink()
    shutil.move(elsewhere, run / "scores.jsonl")
    with Holder(run) as holder:
        line = one_error(CliRunner().invoke(app, args))
        assert f"in use by another gramagents command (pid {holder.process.pid}" in line
        assert not (run / "agreement.json").exists()
    assert CliRunner().invoke(app, args).exit_code == 0
    assert (run / "agreement.json").is_file()


# --- export ---------------------------------------------------------------------------------------


def test_export_into_a_symlink_to_an_empty_folder_is_one_line(tmp_path):
    build = odd_build(tmp_path / "build")
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "alias").symlink_to(empty)
    line = one_error(
        CliRunner().invoke(app, ["export", str(build), str(tmp_path / "alias"), "--to", "parquet"])
    )
    assert line.startswith(f"error: {tmp_path / 'alias'}: is a symbolic link (to {empty})")
    assert list(empty.iterdir()) == [] and (tmp_path / "alias").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias", "build", "empty"]


# --- view --serve ---------------------------------------------------------------------------------


def _get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path)
    reply = connection.getresponse()
    body = reply.read()
    connection.close()
    return reply.status, body


def test_serve_gives_no_file_through_a_link_inside_view(hand_run):  # noqa: F811
    write_view([hand_run])
    view = hand_run / "view"
    (view / "records.jsonl").symlink_to(hand_run / "responses.jsonl")
    (view / "data" / "up").symlink_to(hand_run)
    os.link(hand_run / "failures.jsonl", view / "failures.txt")
    server = make_server(hand_run)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        assert _get(port, "/view/app.js")[0] == 200
        for path in ("/view/records.jsonl", "/view/data/up/responses.jsonl", "/view/failures.txt"):
            status, body = _get(port, path)
            assert status == 404 and b"item_id" not in body, path
    finally:
        server.shutdown()
        server.server_close()
