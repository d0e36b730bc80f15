"""Questions from matches (the paper's Figure 5 templates) and their balanced down-sampling (§3.2).

Every match can be asked as True/False in four forms (the right or a wrong phrase, affirmative
or negated), as Multiple Choice (the right phrase and three wrong phrases of the same sentence,
shuffled with the seed) and as Fill in the Blank (when the answer is the only right one).
Candidates are grouped by (question type, knowledge point, answer category) and k are drawn
from each group (k = 5, the paper's); a separate, smaller exemplar set for few-shot prompts is
drawn the same way from what is left. Questions are written out only for what is drawn.
"""

from __future__ import annotations

import random
import string
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ...api import InputError, file_hash, find_resource, load_yaml_with_lines, read_utf8
from .records import TYPES, QuestionType, SyntaxMatch, SyntaxQuestion

FORMS = ("correct", "correct-negated", "incorrect", "incorrect-negated")
TRUTH = {"correct": "True", "correct-negated": "False", "incorrect": "False",
         "incorrect-negated": "True"}  # fmt: skip
LETTERS = "ABCD"


class PointTemplates(BaseModel):
    """A point's question templates (`{answer}` and one placeholder of the point's own)."""

    model_config = ConfigDict(extra="forbid")

    true_false: str
    true_false_negated: str
    multiple_choice: str
    fill_in_the_blank: str


@dataclass(frozen=True)
class Templates:
    """The question templates of every point, and the placeholder each point fills."""

    path: Path
    hash: str
    points: dict[str, PointTemplates]
    anchors: dict[str, str]

    def true_false(self, point: str, anchor: str, asserted: str, negated: bool) -> str:
        """A True/False statement."""
        spec = self.points[point]
        template = spec.true_false_negated if negated else spec.true_false
        return template.format_map({self.anchors[point]: anchor, "answer": asserted})

    def ask(self, point: str, kind: QuestionType, anchor: str) -> str:
        """A Multiple Choice or Fill in the Blank question."""
        spec = self.points[point]
        template = spec.multiple_choice if kind == "MC" else spec.fill_in_the_blank
        return template.format_map({self.anchors[point]: anchor})


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def load_templates(name: str, points: Iterable[str]) -> Templates:
    """Load the question templates and check each has the placeholders its type needs."""
    path = find_resource("prompts", name)
    data, lines = load_yaml_with_lines(path, read_utf8(path))
    if not isinstance(data, dict):
        raise InputError(path, "the question templates are a mapping of points", line=1)
    parsed: dict[str, PointTemplates] = {}
    anchors: dict[str, str] = {}
    for point in points:
        if point not in data:
            raise InputError(path, f"no question templates for the point '{point}'", line=1)
        try:
            parsed[point] = PointTemplates.model_validate(data[point])
        except ValidationError as exc:
            error = exc.errors()[0]
            key = str(error["loc"][0]) if error["loc"] else ""
            line = lines.get((id(data), point))
            raise InputError(path, error["msg"], line=line, field=f"{point}.{key}") from None
        anchors[point] = _check_placeholders(path, lines, data, point, parsed[point])
    return Templates(path, file_hash(path), parsed, anchors)


def _check_placeholders(
    path: Path, lines: dict, data: dict, point: str, spec: PointTemplates
) -> str:
    anchor: str | None = None
    for key, text in spec.model_dump().items():
        names = _placeholders(text)
        needs_answer = key.startswith("true_false")
        others = names - {"answer"}
        problem = None
        if needs_answer != ("answer" in names):
            problem = "needs {answer}" if needs_answer else "must not give away {answer}"
        elif len(others) != 1 or (anchor is not None and others != {anchor}):
            problem = "needs the point's one placeholder, the same in every template"
        if problem:
            line = lines.get((id(data[point]), key))
            raise InputError(path, problem, line=line, field=f"{point}.{key}")
        anchor = next(iter(others))
    assert anchor is not None
    return anchor


# --- candidates and sampling ------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A question that could be asked: a match, a type, and for True/False a form."""

    match: int
    """Index into the matches."""
    type: QuestionType
    form: str = ""

    def key(self, matches: list[SyntaxMatch]) -> str:
        """The question's id."""
        suffix = f"/{self.form}" if self.form else ""
        return f"{matches[self.match].id}/{self.type}{suffix}"


def candidates(matches: list[SyntaxMatch], skip_true_false: set[str]) -> list[Candidate]:
    """Every question the matches allow, in match order."""
    found: list[Candidate] = []
    for index, match in enumerate(matches):
        if match.point not in skip_true_false:
            forms = FORMS if match.wrong else FORMS[:2]
            found += [Candidate(index, "TF", form) for form in forms]
        if len(match.wrong) >= 3:
            found.append(Candidate(index, "MC"))
        if match.unique:
            found.append(Candidate(index, "FITB"))
    return found


Group = tuple[str, str, str]
"""(question type, knowledge point, answer category)."""


def group_by_tuple(
    found: list[Candidate], matches: list[SyntaxMatch]
) -> dict[Group, list[Candidate]]:
    """Candidates by (type, point, category), in a fixed order of groups."""
    groups: dict[Group, list[Candidate]] = defaultdict(list)
    for candidate in found:
        match = matches[candidate.match]
        groups[candidate.type, match.point, match.category].append(candidate)
    return dict(sorted(groups.items()))


Accept = Callable[[Candidate], bool]


def _draw(
    pool: list[Candidate], k: int, rng: random.Random, accept: Accept | None = None
) -> list[Candidate]:
    """`k` of `pool` at random, different matches first, each one `accept` takes.

    Two forms of one True/False statement are drawn only when the group has too few matches.
    A candidate `accept` refuses is passed over and the next one drawn instead.
    """
    shuffled = list(pool)
    rng.shuffle(shuffled)
    picked: list[Candidate] = []
    used: set[int] = set()
    for candidate in shuffled:
        if len(picked) == k:
            return picked
        if candidate.match not in used and (accept is None or accept(candidate)):
            picked.append(candidate)
            used.add(candidate.match)
    chosen = set(picked)
    for candidate in shuffled:
        if len(picked) == k:
            break
        if candidate not in chosen and (accept is None or accept(candidate)):
            picked.append(candidate)
    return picked


@dataclass
class Sample:
    """The drawn test and exemplar candidates."""

    test: list[Candidate]
    exemplars: list[Candidate]


@dataclass(frozen=True)
class SampleSizes:
    """How many questions the balanced sampling draws (the recipe's `k` and exemplar sizes)."""

    k: int
    exemplar_k: int
    exemplars_per_point: int


def balanced_sample(
    groups: dict[Group, list[Candidate]],
    sizes: SampleSizes,
    seed: int,
    accept: Accept | None = None,
) -> Sample:
    """`k` per group for the test set, then the exemplar set from the rest.

    The exemplar set takes `exemplar_k` per group, topped up from the rest to
    `exemplars_per_point` per (type, point) where there are enough (a few-shot prompt shows
    that many worked examples of its point and type). Only candidates `accept` takes are
    drawn (the verifier's check).
    """
    k, exemplar_k, exemplars_per_point = sizes.k, sizes.exemplar_k, sizes.exemplars_per_point
    test: list[Candidate] = []
    exemplars: list[Candidate] = []
    left: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    have: dict[tuple[str, str], int] = defaultdict(int)
    for (kind, point, category), pool in groups.items():
        rng = random.Random(f"{seed}/sample/{kind}/{point}/{category}")
        drawn = _draw(pool, k, rng, accept)
        chosen = set(drawn)
        rest = [c for c in pool if c not in chosen]
        more = _draw(rest, exemplar_k, rng, accept)
        taken = set(more)
        test += drawn
        exemplars += more
        have[kind, point] += len(more)
        left[kind, point] += [c for c in rest if c not in taken]
    for (kind, point), rest in left.items():
        short = exemplars_per_point - have[kind, point]
        if short > 0 and rest:
            rng = random.Random(f"{seed}/exemplars/{kind}/{point}")
            exemplars += _draw(rest, short, rng, accept)
    return Sample(test, exemplars)


# --- writing questions --------------------------------------------------------------------------


def write_question(
    candidate: Candidate,
    matches: list[SyntaxMatch],
    sentences: dict[str, str],
    templates: Templates,
    role: str,
    seed: int,
) -> SyntaxQuestion:
    """The question a candidate stands for.

    Its wrong answers and option order are drawn with a generator seeded by the build's seed
    and the question's id.
    """
    match = matches[candidate.match]
    qid = candidate.key(matches)
    rng = random.Random(f"{seed}/{qid}")
    same, other = match.wrong[: match.same_kind], match.wrong[match.same_kind :]
    options = None
    asserted = ""
    if candidate.type == "TF":
        asserted = match.answer
        if candidate.form.startswith("incorrect"):
            asserted = rng.choice(same or other)
        negated = candidate.form.endswith("negated")
        question = templates.true_false(match.point, match.anchor, asserted, negated)
        answer = TRUTH[candidate.form]
    else:
        question = templates.ask(match.point, candidate.type, match.anchor)
        answer = match.answer
        if candidate.type == "MC":
            if len(same) >= 3:
                wrong = rng.sample(same, 3)
            else:
                wrong = same + rng.sample(other, 3 - len(same))
            texts = [match.answer, *wrong]
            rng.shuffle(texts)
            options = [{"key": LETTERS[i], "text": t} for i, t in enumerate(texts)]
            answer = LETTERS[texts.index(match.answer)]
    return SyntaxQuestion(
        id=qid,
        match_id=match.id,
        tree_id=match.tree_id,
        point=match.point,
        type=candidate.type,
        role=role,  # type: ignore[arg-type]
        category=match.category,
        form=candidate.form,
        sentence=sentences[match.tree_id],
        question=question,
        options=options,
        answer=answer,
        phrase=match.answer,
        asserted=asserted,
        anchor=match.anchor,
        blank=templates.ask(match.point, "FITB", match.anchor),
    )


def count_table(pairs: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """(type, point) pairs counted as {type: {point: n}}, points in the paper's order."""
    from .points import POINTS

    counts: dict[tuple[str, str], int] = defaultdict(int)
    for pair in pairs:
        counts[pair] += 1
    rank = {p: i for i, p in enumerate(POINTS)}
    points = sorted({p for _, p in counts}, key=lambda p: (rank.get(p, len(rank)), p))
    return {kind: {p: counts[kind, p] for p in points if counts[kind, p]} for kind in TYPES}
