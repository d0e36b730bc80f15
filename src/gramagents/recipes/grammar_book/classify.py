"""The heading classifier (Phrasing Atelier, paper §3.2): sections the word lists leave open.

`book-sections` decides a section by its headings when a word list says (`headings.py`). A
book whose headings the lists do not know (another language, or headings such as "Agreement"
with no grammar heading above them) leaves sections `undecided`; with agents on, this agent
reads each one's headings and the start of its text and says whether the section explains the
grammar (syntax or morphology) of the language. Its verdict and reason are the section's. A
section it cannot judge stays undecided and is not read; with agents off nothing is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...api import AgentContext, AgentResult, AgentSpec, AgentTask, BuildView, agent
from .records import BookSection, book_language


class ClassifyOptions(BaseModel):
    """How much of a section the classifier reads."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    words: int = Field(default=60, ge=0)
    """Words of the section's text shown after its headings."""


class SectionClass(BaseModel):
    """The classifier's answer."""

    grammar: bool = Field(description="The section explains syntax or morphology.")
    reason: str = Field(description="One sentence saying why.")

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("give a one-sentence reason")
        return " ".join(value.split())


@dataclass(frozen=True, slots=True)
class SectionTask(AgentTask):
    """One undecided section of a book in `language`."""

    section: BookSection
    language: str


def plan_sections(view: BuildView, options: BaseModel) -> list[SectionTask]:
    """One call per undecided section."""
    language = book_language(view.context)
    return [
        SectionTask(s, language) for s in view.of_type(BookSection) if s.decision == "undecided"
    ]


def opening(section: BookSection, words: int) -> str:
    """The first `words` words of a section's text (a table as its header)."""
    parts = [b.text if b.kind == "text" else " | ".join(b.header) for b in section.blocks]
    return " ".join(" ".join(parts).split()[:words])


async def classify_section(task: SectionTask, ctx: AgentContext) -> AgentResult:
    """Keep or drop one undecided section."""
    section = task.section
    options: Any = ctx.options
    template = ctx.template("en")
    variables = {
        "language": task.language,
        "headings": " > ".join(section.path),
        "text": opening(section, options.words),
    }
    result = await ctx.ask(template, variables, SectionClass)
    if result.value is None:
        return AgentResult([], "failed", failure=result.error)
    keep = result.value.grammar
    decided = section.model_copy(
        update={
            "decision": "keep" if keep else "drop",
            "reason": f"classifier ({ctx.model.label}): {result.value.reason}",
            "decided_by": "classifier",
        }
    )
    return AgentResult([decided], "kept" if keep else "dropped")


agent(
    AgentSpec(
        name="section-classifier",
        run=classify_section,
        plan=plan_sections,
        options=ClassifyOptions,
        outcomes=("kept", "dropped", "failed"),
        description="Whether a section the heading lists leave open explains grammar (§3.2).",
    )
)
