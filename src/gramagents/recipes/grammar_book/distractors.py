"""The distractor check of Tasks 1-4: a wrong option must really be wrong.

A sentence is *owned* by its own point, by every point that has the same sentence (compared
without case, spaces or punctuation: the same sentence written for two points survives the
per-point deduplication), and by every point the back-checker said also applies to it
(`PointCheck`, with agents on). Then:

- Tasks 1 and 3: a point offered as wrong must not own the sentence (Task 3: any sentence of
  the paragraph);
- Task 2: a sentence offered as not showing the point must not be owned by it;
- Task 4: a minimal pair's ungrammatical twin must not be a sentence the build accepted, nor
  one the back-checker judged grammatical; such a pair is dropped.

Options are drawn as before; a drawn distractor that fails the check is dropped and replaced
by one drawn from the rest that passes; when none is left the item is left out. The counts
go into the builder's stage in the manifest.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from ...api import Instance, normalise
from .records import PointCheck

T = TypeVar("T", bound=Hashable)
COUNTS = ("distractors_dropped", "distractors_replaced", "items_left_out", "pairs_dropped")


class Owners:
    """Which points own each accepted sentence, and which twins are not wrong after all."""

    def __init__(
        self, sentences: list[Instance], pairs: list[Instance], checks: list[PointCheck]
    ) -> None:
        by_text: dict[str, set[str]] = {}
        for sentence in sentences:
            by_text.setdefault(normalise(sentence.text), set()).add(sentence.point_id)
        self.of: dict[str, set[str]] = {
            s.id: {s.point_id, *by_text[normalise(s.text)]} for s in sentences
        }
        grammatical_twins = set()
        for check in checks:
            if check.applies and check.kind == "distractor" and check.sentence_id in self.of:
                self.of[check.sentence_id].add(check.point_id)
            elif check.applies and check.kind == "twin":
                grammatical_twins.add(check.sentence_id)
        self.bad_pairs = {
            p.id for p in pairs if p.id in grammatical_twins or normalise(p.text) in by_text
        }
        self.counts: Counter[str] = Counter(dict.fromkeys(COUNTS, 0))

    def owns(self, point_id: str, sentence: Instance) -> bool:
        """Whether `point_id` owns the sentence (so it is no distractor for it)."""
        return point_id in self.of.get(sentence.id, {sentence.point_id})

    def draw(
        self, rng: random.Random, pool: Sequence[T], k: int, bad: Callable[[T], bool]
    ) -> list[T] | None:
        """`k` distractors drawn from `pool`, each bad one replaced; None when too few pass.

        Draws exactly as `rng.sample(pool, k)` does while nothing is bad.
        """
        picked = rng.sample(list(pool), k)
        spare: list[T] | None = None
        kept: list[T] = []
        for candidate in picked:
            if not bad(candidate):
                kept.append(candidate)
                continue
            self.counts["distractors_dropped"] += 1
            if spare is None:
                spare = [x for x in pool if x not in picked and not bad(x)]
            if not spare:
                self.counts["items_left_out"] += 1
                return None
            kept.append(spare.pop(rng.randrange(len(spare))))
            self.counts["distractors_replaced"] += 1
        return kept

    def usable_pairs(self, pairs: list[Instance]) -> list[Instance]:
        """The minimal pairs whose twin is really wrong (the others counted as dropped)."""
        usable = [p for p in pairs if p.id not in self.bad_pairs]
        self.counts["pairs_dropped"] += len(pairs) - len(usable)
        return usable
