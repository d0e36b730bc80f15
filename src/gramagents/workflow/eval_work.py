"""What the eval graph carries: one typed record of work per item, and the run's context.

An `ItemWork` follows its item through a chunk: the rendered request (a chat request, a
minimal pair's two scoring requests, or its two forced-choice requests) and its cache keys,
then the model's answer, the judge's verdict, the extraction and the score. It is a plain
slots dataclass, not a validated model: the graph makes one per item, and validating each
would cost the eval more than the graph itself (bench/graph.py).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, TypedDict

from ..models.model import Model
from ..records import ChatRequest, Generation, Item, Loglikelihood, LoglikelihoodRequest
from ..scoring.extract import Extraction
from ..scoring.metrics import ItemScore
from ..tasks import TaskSpec
from ..tasks.registry import rubric_of
from ..templates import PromptTemplate

if TYPE_CHECKING:
    from ..judging.rubric import Rubric
    from ..judging.verdict import JuryVerdict
    from .eval import ChunkRecords

ScoringPair = tuple[LoglikelihoodRequest, LoglikelihoodRequest]
"""A minimal pair's two scoring requests: the good sentence's, then the bad one's."""
LikelihoodPair = tuple[Loglikelihood, Loglikelihood]
ChoicePair = tuple[ChatRequest, ChatRequest]
"""A minimal pair asked as a forced choice: the grammatical sentence shown first, then second."""


@dataclass(slots=True)
class ItemWork:
    """One item on its way through the eval graph: request, answer, verdict and score."""

    item: Item
    request: ChatRequest | None = None
    """The chat request (None for a minimal pair)."""
    pair: ScoringPair | None = None
    """A minimal pair's scoring requests (None for a chat request)."""
    choice: ChoicePair | None = None
    """A minimal pair's forced-choice requests, in both orders."""
    keys: tuple[str, ...] = ()
    """The requests' cache keys, when the plan asked the cache (one per request)."""
    generation: Generation | None = None
    replies: tuple[Generation, ...] | None = None
    """The answers to the forced-choice requests, in their order."""
    likelihoods: LikelihoodPair | None = None
    verdict: JuryVerdict | None = None
    """The rubric judges' verdicts (judged tasks only)."""
    extraction: Extraction | None = None
    score: ItemScore | None = None

    @property
    def not_asked(self) -> bool:
        """Whether a stop left the model's answer, or the judge's verdict, unasked.

        Such an item is not recorded at all: the resumed run asks it (what was answered is
        in the cache).
        """
        if self.generation is not None and self.generation.interrupted:
            return True
        if self.likelihoods is not None and any(s.interrupted for s in self.likelihoods):
            return True
        return self.verdict is not None and self.verdict.interrupted

    def forget_answer(self) -> None:
        """Let go of what the chunk added, keeping what the plan rendered.

        The plan's work lives as long as the run (the graph keeps what it fanned out); the
        answers must not.
        """
        self.generation = self.likelihoods = self.verdict = self.replies = None
        self.extraction = self.score = None

    def chats(self) -> tuple[ChatRequest, ...]:
        """The item's chat requests: its one request, its forced-choice pair, or none."""
        if self.request is not None:
            return (self.request,)
        return self.choice or ()

    def answered(self, generations: list[Generation]) -> None:
        """Take the answers to `chats()`, in order."""
        if self.request is not None:
            self.generation = generations[0]
        else:
            self.replies = tuple(generations)


@dataclass(slots=True)
class Requests:
    """A chunk's requests by kind, each beside the work it belongs to."""

    chats: list[ItemWork] = field(default_factory=list)
    chat_requests: list[ChatRequest] = field(default_factory=list)
    """One per chat item, two per forced-choice pair, in the order of `chats`."""
    pairs: list[ItemWork] = field(default_factory=list)
    pair_requests: list[LoglikelihoodRequest] = field(default_factory=list)
    """Two per pair, the good sentence's first."""


def requests_of(work: list[ItemWork]) -> Requests:
    """The chat requests and the scoring requests of `work`, in order."""
    split = Requests()
    for entry in work:
        asked = entry.chats()
        if asked:
            split.chats.append(entry)
            split.chat_requests.extend(asked)
        elif entry.pair is not None:
            split.pairs.append(entry)
            split.pair_requests.extend(entry.pair)
    return split


class ChunkState(TypedDict, total=False):
    """One chunk of the eval: rendered by the plan (`work`) or by the chunk (`items`)."""

    work: list[ItemWork]
    """The items with their requests and cache keys, when the plan rendered them."""
    items: list[Item]
    """The items, when the chunk renders its own requests (the cache is off)."""
    answered: Annotated[int, operator.add]


@dataclass
class EvalContext:
    """What the nodes need besides the state: the model, the tasks and the record sinks."""

    model: Model
    tasks: dict[str, TaskSpec]
    records: Callable[[str], ChunkRecords]
    """A buffer for one chunk's records of a model (`RecordWriter.chunk`)."""
    advance: Callable[[int], None] = field(default=lambda count: None)
    """Settles a chunk's progress steps as it ends (`steps_of` its items; progress.Steps)."""
    report: Callable[[], object] | None = None
    """Writes the report of what is recorded so far (None: the caller writes it next)."""
    judges: list[Model] = field(default_factory=list)
    """The rubric judges (the jury), when some task is judged."""
    jury: str = "median"
    """How the judges' totals make one score (judging/jury.py)."""
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    """The rubrics of the judged items, by the name items and tasks give (loaded once)."""
    templates: dict[str, PromptTemplate] = field(default_factory=dict)
    """Every prompt template the run renders (the judge's included), by name: loaded once per
    run, as the manifest hashed them."""
    conditioning: dict[str, str] = field(default_factory=dict)
    """Per minimal-pair task of the run, how its sentences are scored (pair_conditioning.py
    resolves every one: the run's option, else its items', else the task's own)."""
    tally: Callable[[str, int], None] = field(default=lambda name, count: None)
    """Counts steps as they happen (`answered` by the model, `judged`), for progress."""


def steps_of(items: Iterable[Item], count: int, ctx: EvalContext) -> int:
    """The progress steps of `count` items: their answers, and the judged ones' verdicts.

    Without judges that is `count`, and the items are not even looked at; a jury's verdict
    on an answer is one step, however many judges it has.
    """
    if not ctx.judges:
        return count
    return count + sum(1 for item in items if rubric_of(item, ctx.tasks) is not None)
