"""Runs that share one response cache at the same time: writers wait for each other, a lock
held too long ends in one clear error, and two evals on one cache both finish correctly."""

import multiprocessing
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gramagents.errors import GramagentsError
from gramagents.runtime.cache import CacheError, ResponseCache
from gramagents.testing.drills import (
    check_run,
    cli_env,
    drill_answer,
    eval_command,
    run_cli,
    write_drill_dataset,
)
from gramagents.testing.openai_server import FakeChatServer


def hold_write_lock(path: Path, seconds: float) -> threading.Thread:
    """Another connection takes the write lock and keeps it for `seconds`."""
    taken = threading.Event()

    def hold() -> None:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT OR REPLACE INTO answers VALUES ('other', '{}', 0)")
        taken.set()
        time.sleep(seconds)
        db.execute("COMMIT")
        db.close()

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait(5)
    return thread


def test_a_write_waits_out_a_lock_longer_than_the_busy_timeout(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, busy_timeout=0.1, lock_attempts=8)
    holder = hold_write_lock(path, 0.6)
    cache.put_many({"k": {"text": "T"}})  # locked for six busy timeouts: tried again
    holder.join()
    assert cache.get_many(["k", "other"]) == {"k": {"text": "T"}, "other": {}}
    cache.close()


def test_a_lock_that_is_never_let_go_ends_in_one_clear_error(tmp_path):
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path, busy_timeout=0.05, lock_attempts=3)
    holder = hold_write_lock(path, 1.0)
    with pytest.raises(CacheError) as caught:
        cache.put_many({"k": {"text": "T"}})
    holder.join()
    assert isinstance(caught.value, GramagentsError)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "locked by another process" in message
    assert "\n" not in message
    cache.close()


def _writer(path: str, who: int, count: int) -> None:
    cache = ResponseCache(Path(path))
    for i in range(count):
        cache.put_many({f"{who}-{i}": {"i": i}, f"shared-{i}": {"i": i}})
        assert cache.get_many([f"{who}-{i}"]) == {f"{who}-{i}": {"i": i}}
    cache.close()


def test_four_processes_write_one_fresh_cache_at_once(tmp_path):
    path = tmp_path / "cache.sqlite"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w, 300)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 4 * 300 + 300
    cache.close()


@pytest.mark.slow
def test_two_evals_sharing_one_cache_at_once_both_finish_correctly(tmp_path):
    items = 300
    dataset = write_drill_dataset(tmp_path / "dataset.jsonl", items)
    shared = tmp_path / "shared.sqlite"
    with FakeChatServer(responder=drill_answer, delay=0.005) as server:
        reference = run_cli(
            eval_command(dataset, server.base_url, tmp_path / "reference"),
            cli_env(tmp_path / "own.sqlite"),
            tmp_path,
        )
        assert reference.returncode == 0, reference.stderr
        runs = [
            subprocess.Popen(
                eval_command(dataset, server.base_url, tmp_path / name, concurrency=16),
                env=cli_env(shared),
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in ("first", "second")
        ]
        outcomes = [run.communicate(timeout=300) for run in runs]
    for run, (_, stderr) in zip(runs, outcomes, strict=True):
        assert run.returncode == 0, stderr
    for name in ("first", "second"):
        check = check_run(tmp_path / "reference", tmp_path / name, items)
        assert (check.status, check.survived, check.duplicated, check.identical) == (
            "complete",
            items,
            0,
            True,
        )
    cache = ResponseCache(shared)
    assert len(cache) == items  # each answer stored once, whichever run stored it
    cache.close()
