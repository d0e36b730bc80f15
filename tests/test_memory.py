import gc
import weakref

from gramagents.runtime.memory import collected_every, collector_paused, long_lived


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A two-object reference cycle nothing else points to; a weak reference to it."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_collected_every_pauses_the_collector_and_collects_by_hand_at_the_count():
    assert gc.isenabled()
    with collected_every(10) as done:
        assert not gc.isenabled()
        ref = cycle()
        done(9)
        assert ref() is not None  # not yet: only reference counting runs while paused
        done(1)
        assert ref() is None  # the tenth item brought a full collection
    assert gc.isenabled()


def test_long_lived_blocks_nest_and_only_the_outermost_unfreezes():
    gc.unfreeze()
    with long_lived():
        assert gc.get_freeze_count() > 0
        with long_lived():
            pass
        assert gc.get_freeze_count() > 0  # the inner end leaves the outer block's objects
    assert gc.get_freeze_count() == 0


def test_what_a_pause_makes_inside_long_lived_stays_out_of_the_walks():
    gc.unfreeze()
    with long_lived():
        before = gc.get_freeze_count()
        with collector_paused():
            made = [Node() for _ in range(1000)]
        assert gc.get_freeze_count() >= before + len(made)
    with collector_paused():  # outside long_lived nothing is frozen
        [Node() for _ in range(10)]
    assert gc.get_freeze_count() == 0


def test_inside_long_lived_a_collection_leaves_its_survivors_out_of_the_next():
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
