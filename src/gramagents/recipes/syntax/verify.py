"""The distractor verifier: a question is kept only if exactly its key is right.

Wrong answers are chosen so that none is a right answer (`points.wrong_answers`); this is the
check of what a reader is finally shown, made apart from that choice. The sentence's tree is
matched again with every pattern of the patterns file, and the question's right answers are
the answers of every match of its point about the same thing: a placeholder that reads the
same (case and punctuation aside, as `metrics.words` compares answers), or a verb chain that
shares a verb with the question's. Then:

- Multiple Choice: no option but the key is a right answer, and no two options read the same;
- True/False: a statement asserting a wrong phrase asserts no right answer;
- Fill in the Blank: the answer is the only right answer in the sentence;
- any type: the key is itself one of the right answers.

A question that fails is dropped, and another of its group is drawn in its place; the build
counts what was dropped, by type and reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .metrics import words
from .points import Found, Points, find_matches
from .records import SyntaxQuestion
from .trees import ParsedTree

Said = tuple[str, ...]
"""A phrase as answers are compared (`metrics.words`)."""


@dataclass
class Verifier:
    """Checks written questions against every pattern's matches in their sentences."""

    trees: dict[str, ParsedTree]
    points: Points
    _found: dict[tuple[str, str], list[Found]] = field(default_factory=dict)
    _by_point: dict[str, Points] = field(default_factory=dict)

    def matches(self, tree_id: str, point: str) -> list[Found]:
        """Every match of every pattern of a point in a tree (computed once)."""
        found = self._found.get((tree_id, point))
        if found is None:
            if point not in self._by_point:
                self._by_point[point] = self.points.only(point)
            found = find_matches(self.trees[tree_id], self._by_point[point])
            self._found[tree_id, point] = found
        return found

    def right_answers(self, question: SyntaxQuestion) -> set[Said]:
        """The answers of every match of the question's point that answers the same question."""
        anchor = words(question.anchor)
        found = self.matches(question.tree_id, question.point)
        asked = [m for m in found if words(m.anchor.text) == anchor]
        verbs = {i for m in asked if m.chained for i in m.anchor.words}
        return {
            words(m.answer.text)
            for m in found
            if words(m.anchor.text) == anchor or (m.chained and verbs & set(m.anchor.words))
        }

    def problem(self, question: SyntaxQuestion) -> str | None:
        """Why the question cannot be asked (a short reason), or None when it can."""
        right = self.right_answers(question)
        if words(question.phrase) not in right:
            return "key not found"
        if question.type == "MC":
            shown = [words(o["text"]) for o in question.options or []]
            wrong = [
                words(o["text"]) for o in question.options or [] if o["key"] != question.answer
            ]
            if any(w in right for w in wrong):
                return "second right option"
            if len(set(shown)) < len(shown):
                return "options alike"
        elif question.type == "TF":
            if question.form.startswith("incorrect") and words(question.asserted) in right:
                return "wrong statement is right"
        elif len(right) > 1:
            return "several right answers"
        return None
