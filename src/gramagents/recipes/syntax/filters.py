"""The syntax recipe's build nodes: find the knowledge points, then ask and sample questions.

- `syntax-extract` runs the patterns of `prompts/syntax/patterns.yaml` over every tree and
  records each match with the sentence's wrong answers for it (`matches.jsonl`);
- `syntax-questions` writes the questions the matches allow from `prompts/syntax/questions.yaml`,
  draws the balanced test set and the exemplar set (§3.2), and gives MVP the True/False
  questions of GS, SC, DO and IO (Table 1, ‡). Its counts (per type and point, of every
  question possible and of those drawn) go into the manifest's `stages`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...api import BuildView, FilterSpec, NodeEnv, NodeUpdate, Record, filter_node, record_file
from .points import (
    POINTS,
    Points,
    candidates,
    find_matches,
    load_points,
    load_points_file,
    point_order,
    wrong_answers,
)
from .questions import (
    Candidate,
    SampleSizes,
    balanced_sample,
    group_by_tuple,
    load_templates,
    write_question,
)
from .questions import candidates as question_candidates
from .reader import TREES
from .records import BORROWED, TYPES, SyntaxMatch, SyntaxQuestion, SyntaxTree
from .verify import Verifier


class SyntaxFile(Record):
    """A data file the build read (patterns, question templates), with its hash."""

    id: str
    path: str
    hash: str


record_file(SyntaxFile, "syntax-files.jsonl")


class ExtractOptions(BaseModel):
    """Options of `syntax-extract`."""

    model_config = ConfigDict(extra="forbid")

    patterns: str = "syntax/patterns.yaml"
    """The patterns file, under `prompts/` (a copy in the working directory wins)."""
    points: list[str] = Field(default_factory=lambda: list(POINTS))
    """The knowledge points to look for."""


async def extract(view: BuildView, options: ExtractOptions, env: NodeEnv) -> NodeUpdate:
    """Match every point's patterns in every tree."""
    points = load_points(options.patterns, options.points)
    parsed = view.context.get(TREES, {})
    made: list[BaseModel] = [
        SyntaxFile(id="patterns", path=str(points.path), hash=points.hash),
    ]
    counts: Counter[str] = Counter()
    with_matches = 0
    for tree in view.of_type(SyntaxTree):
        found = find_matches(parsed[tree.id], points)
        if not found:
            continue
        with_matches += 1
        numbers: Counter[str] = Counter()
        for match, (wrong, same, unique) in zip(
            found, wrong_answers(found, candidates(parsed[tree.id])), strict=True
        ):
            numbers[match.point] += 1
            made.append(
                SyntaxMatch(
                    id=f"{tree.id}/{match.point}{numbers[match.point]}",
                    tree_id=tree.id,
                    point=match.point,
                    pattern=match.pattern,
                    anchor=match.anchor.text,
                    answer=match.answer.text,
                    category=match.category,
                    wrong=wrong,
                    same_kind=same,
                    unique=unique,
                )
            )
        counts.update(numbers)
    tally = {"trees with matches": with_matches, "matches": sum(counts.values())}
    tally.update({f"matches {p}": counts[p] for p in options.points})
    return NodeUpdate(records=made, counts=tally)


class QuestionOptions(BaseModel):
    """Options of `syntax-questions` (the paper's §3.2)."""

    model_config = ConfigDict(extra="forbid")

    questions: str = "syntax/questions.yaml"
    """The question templates, under `prompts/`."""
    k: int = Field(default=5, ge=1)
    """Test questions drawn per (type, point, answer category)."""
    exemplar_k: int = Field(default=2, ge=0)
    """Exemplar questions drawn per (type, point, answer category), from the rest."""
    exemplars_per_point: int = Field(default=5, ge=0)
    """The exemplar set is topped up to this many per (type, point) where it can be."""
    true_false_from: dict[str, list[str]] = Field(
        default_factory=lambda: {"MVP": ["GS", "SC", "DO", "IO"]}
    )
    """Points whose True/False questions are those of other points (Table 1, ‡)."""


async def ask(view: BuildView, options: QuestionOptions, env: NodeEnv) -> NodeUpdate:
    """Write and draw the questions; the verifier's checks decide which can be drawn."""
    matches = view.of_type(SyntaxMatch)
    points = sorted({m.point for m in matches}, key=point_order)
    templates = load_templates(options.questions, points)
    sentences = {t.id: t.sentence for t in view.of_type(SyntaxTree)}
    possible = question_candidates(matches, set(options.true_false_from))
    groups = group_by_tuple(possible, matches)
    verifier = Verifier(view.context.get(TREES, {}), _full_patterns(view))
    verdicts: dict[Candidate, bool] = {}
    dropped: Counter[str] = Counter()

    def accept(candidate: Candidate) -> bool:
        if candidate not in verdicts:
            written = write_question(candidate, matches, sentences, templates, "test", env.seed)
            problem = verifier.problem(written)
            if problem is not None:
                dropped[f"dropped {candidate.type}: {problem}"] += 1
            verdicts[candidate] = problem is None
        return verdicts[candidate]

    sizes = SampleSizes(options.k, options.exemplar_k, options.exemplars_per_point)
    sample = balanced_sample(groups, sizes, env.seed, accept)
    made: list[BaseModel] = [
        SyntaxFile(id="questions", path=str(templates.path), hash=templates.hash)
    ]
    for role, drawn in (("test", sample.test), ("exemplar", sample.exemplars)):
        written = [write_question(c, matches, sentences, templates, role, env.seed) for c in drawn]
        made += written
        made += _borrowed(written, options.true_false_from)
    tally = _possible_counts(possible, matches, points)
    for question in made:
        if isinstance(question, SyntaxQuestion):
            key = f"{question.role} {question.type}"
            tally[key] = tally.get(key, 0) + 1
    tally["groups"] = len(groups)
    tally["verified"] = len(verdicts)
    tally.update(sorted(dropped.items()))
    return NodeUpdate(records=made, counts=tally)


def _full_patterns(view: BuildView) -> Points:
    """Every pattern of the patterns file the extraction read (all its points)."""
    read = next((f for f in view.of_type(SyntaxFile) if f.id == "patterns"), None)
    if read is None:
        return load_points(ExtractOptions().patterns)
    return load_points_file(Path(read.path))


def _possible_counts(
    possible: list[Candidate], matches: list[SyntaxMatch], points: list[str]
) -> dict[str, int]:
    """Every question the matches allow, per type and point (the paper's Table 4)."""
    counts: Counter[str] = Counter()
    for candidate in possible:
        counts[f"possible {candidate.type} {matches[candidate.match].point}"] += 1
    order = {f"possible {t} {p}": (i, point_order(p)) for i, t in enumerate(TYPES)
             for p in points}  # fmt: skip
    return {key: counts[key] for key in sorted(counts, key=lambda k: order.get(k, (9, (0, k))))}


def _borrowed(questions: list[SyntaxQuestion], sources: dict[str, list[str]]) -> list[BaseModel]:
    """Copies of other points' True/False questions under the points that borrow them."""
    copies: list[BaseModel] = []
    for point, lenders in sources.items():
        for question in questions:
            if question.type == "TF" and question.point in lenders:
                copies.append(
                    question.model_copy(
                        update={
                            "id": f"{question.id}{BORROWED}{point}",
                            "point": point,
                            "borrowed_from": question.id,
                        }
                    )
                )
    return copies


filter_node(
    FilterSpec(
        name="syntax-extract",
        run=extract,
        options=ExtractOptions,
        description="Find the knowledge points in every tree with the patterns file.",
    )
)
filter_node(
    FilterSpec(
        name="syntax-questions",
        run=ask,
        options=QuestionOptions,
        description="Write the questions from templates and draw balanced test and exemplar sets.",
    )
)
