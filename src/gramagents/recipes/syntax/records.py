"""What a syntax-QA build makes: trees as read, matches of the knowledge points, questions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ...api import CheckVerdict, Record

QuestionType = Literal["TF", "MC", "FITB"]
TYPES: tuple[QuestionType, ...] = ("TF", "MC", "FITB")
BORROWED = "+"
"""In a question's id, what comes before the point that borrows it (`Q+MVP`)."""


def is_borrowed(item_id: str) -> bool:
    """Whether an item asks another point's question again (MVP's True/False questions).

    Such items count for their own point but not again in the overall scores: the paper's
    totals (Table 1, ‡) count each question once.
    """
    return BORROWED in item_id


class SyntaxTree(Record):
    """One tree of the source, as read."""

    id: str
    """`FILE#N`: the N-th tree of the file (1-based)."""
    file: str
    line: int
    """Line of the file where the tree starts."""
    sentence: str
    """The sentence without empty elements, detokenized."""
    tree: str
    """The bracketed tree on one line."""


class SyntaxMatch(Record):
    """A knowledge point found in a tree: a question's placeholder, its answer, wrong answers."""

    id: str
    tree_id: str
    point: str
    pattern: int
    """Index of the point's pattern that matched."""
    anchor: str
    """The phrase the question is about (its placeholder)."""
    answer: str
    category: str
    """The answer's syntactic category (`categories`: its form, or a verb chain's shape)."""
    wrong: list[str] = Field(default_factory=list)
    """The sentence's phrases that are no right answer, those of the answer's kind first."""
    same_kind: int = 0
    """How many of `wrong` (the first ones) are of the answer's kind."""
    unique: bool = True
    """The answer is the only right one for this question (fill-in-the-blank needs it)."""


class SyntaxQuestion(Record):
    """A question in the test set or the exemplar set."""

    id: str
    match_id: str
    tree_id: str
    point: str
    type: QuestionType
    role: Literal["test", "exemplar"]
    category: str
    form: str = ""
    """True/False: `correct`, `correct-negated`, `incorrect` or `incorrect-negated`."""
    sentence: str
    question: str
    options: list[dict[str, str]] | None = None
    """Multiple choice: `{key, text}` in the shuffled order."""
    answer: str
    """As a worked example shows it: `True`/`False`, an option letter, or the phrase."""
    phrase: str
    """The right answer phrase."""
    asserted: str = ""
    """True/False: the phrase the statement asserts (the right one or a wrong one)."""
    anchor: str
    blank: str
    """The question as fill-in-the-blank (what the back-checker is shown)."""
    borrowed_from: str | None = None
    """The question of another point this one is a copy of (MVP's True/False questions)."""
    checks: list[CheckVerdict] = Field(default_factory=list)
    """Back-checks of the question (with their verdicts), in order."""
    flags: list[str] = Field(default_factory=list)
    """Why the question should be looked at by a person (e.g. an ambiguous answer)."""

    def gold(self) -> Any:
        """The gold answer in the task's answer space (T/F, a letter, the phrase)."""
        if self.type == "TF":
            return "T" if self.answer == "True" else "F"
        return self.answer
