import asyncio
import gc
import logging
import os
import weakref

import pytest

from gramagents.models import hf_load
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.runtime.memory import (
    collected_every,
    collector_paused,
    keep_out_of_collection,
    long_lived,
    tuned_collector,
)
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.workflow.eval import EvalOptions, run_eval


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


@pytest.fixture
def tuned():
    """What every `gramagents` command asks for (cli.main)."""
    with tuned_collector():
        yield


def cycle() -> weakref.ref[Node]:
    """A two-object reference cycle nothing else points to; a weak reference to it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_collected_every_pauses_the_collector_and_collects_by_hand_at_the_count(tuned):
    assert gc.isenabled()
    with collected_every(10) as done:
        assert not gc.isenabled()
        ref = cycle()
        done(9)
        assert ref() is not None  # not yet: only reference counting runs while paused
        done(1)
        assert ref() is None  # the tenth item brought a full collection
    assert gc.isenabled()


def test_long_lived_blocks_nest_and_only_the_outermost_unfreezes(tuned):
    gc.unfreeze()
    with long_lived():
        assert gc.get_freeze_count() > 0
        with long_lived():
            pass
        assert gc.get_freeze_count() > 0  # the inner end leaves the outer block's objects
    assert gc.get_freeze_count() == 0


def test_what_a_pause_makes_inside_long_lived_stays_out_of_the_walks(tuned):
    gc.unfreeze()
    with long_lived():
        before = gc.get_freeze_count()
        with collector_paused():
            made = [Node() for _ in range(1000)]
        assert gc.get_freeze_count() >= before + len(made)
    with collector_paused():  # outside long_lived nothing is frozen
        [Node() for _ in range(10)]
    assert gc.get_freeze_count() == 0


def test_inside_long_lived_a_collection_leaves_its_survivors_out_of_the_next(tuned):
    gc.unfreeze()
    with long_lived(), collected_every(10) as done:
        kept = [Node() for _ in range(1000)]
        before = gc.get_freeze_count()
        ref = cycle()
        done(10)
        assert ref() is None  # garbage is still collected
        assert gc.get_freeze_count() >= before + len(kept)  # survivors frozen
        later = cycle()
        done(10)
        assert later() is None  # and what is made afterwards is collected by the next one
    assert gc.get_freeze_count() == 0
    gc.unfreeze()
    with collected_every(10) as done:  # outside long_lived nothing is frozen
        done(10)
    assert gc.get_freeze_count() == 0


def test_without_being_asked_the_functions_leave_the_collector_alone():
    gc.unfreeze()
    with long_lived(), collected_every(10) as done, collector_paused():
        assert gc.isenabled()
        keep_out_of_collection()
        done(10)
        assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0


def process_state() -> dict[str, object]:
    loggers = ("", "transformers", "instructor", "instructor.v2", "instructor.v2.retry")
    return {
        "gc": (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()),
        "environ": dict(os.environ),
        "levels": {name: logging.getLogger(name).level for name in loggers},
        "handlers": list(logging.getLogger().handlers),
    }


def test_run_eval_leaves_the_process_as_it_found_it(tmp_path):
    seen: list[tuple[bool, int]] = []

    def answer(request) -> str:
        seen.append((gc.isenabled(), gc.get_freeze_count()))
        return "T"

    ScriptedBackend.register("process-state", answer)
    dataset = tmp_path / "dataset.jsonl"
    items = [
        Item(id=f"q{n}", task="SINGLE-T", prompt=PromptParts(template="raw.md", vars={"text": n}))
        for n in range(30)
    ]
    write_jsonl_atomic(dataset, items)
    gc.unfreeze()
    before = process_state()
    options = EvalOptions(models=["scripted:process-state"], run_dir=tmp_path / "run", view=False)
    result = asyncio.run(run_eval(dataset, options))
    assert result.manifest.status == "complete" and len(seen) == 30
    assert set(seen) == {(True, 0)}  # the collector ran as the caller had it, all along
    assert process_state() == before


@pytest.mark.slow
def test_loading_a_local_model_leaves_environment_and_log_levels_alone(smollm2, monkeypatch):
    # the session's first load has imported torch and transformers, which configure
    # themselves (their loggers, torch's compile cache variable); this load is ours alone
    monkeypatch.setattr(hf_load, "_LOADED", {})
    for name in ("TRANSFORMERS_VERBOSITY", "HF_HUB_DISABLE_PROGRESS_BARS"):
        monkeypatch.delenv(name, raising=False)
    logging.getLogger("transformers").setLevel(logging.INFO)
    before = process_state()
    again = smollm2.lm
    assert again.model is not None and hf_load._LOADED  # loaded anew, not the session's
    assert process_state() == before
