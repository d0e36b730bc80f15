"""The smallest complete recipe, added only through `gramagents.api`, runs end to end.

It is the recipe `docs/adding-a-recipe.md` walks through: a reader (a word list), an agent
(a scripted model writes plurals), the engine's dedup filter and a filter of its own, a bank
builder, a task with its scoring, and a report section; then build, eval and report.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel, field_validator

from gramagents import api
from gramagents.agents.base import AGENTS
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, PromptParts
from gramagents.report.markdown import SECTIONS
from gramagents.sources import SOURCES
from gramagents.tasks.registry import BUILDERS, TASKS
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval
from gramagents.workflow.nodes import FILTERS

WORDS = ["apple", "cat", "owl", "cat", "dog", "umbrella", "hippopotamus"]


class Word(BaseModel):
    id: str
    text: str
    origin: str = "source"


@api.source_reader("toy-words")
def read_words(path: Path, options: api.ReadOptions) -> api.SourceData:
    words = [w.strip() for w in path.read_text().splitlines() if w.strip()]
    records = [Word(id=f"w{n}", text=w) for n, w in enumerate(words[: options.limit])]
    return api.SourceData(records=records, stats={"words": len(records)})


class Plural(BaseModel):
    plural: str

    @field_validator("plural")
    @classmethod
    def ends_in_s(cls, value: str) -> str:
        if not value.endswith("s"):
            raise ValueError("a plural ends in s")
        return value


@dataclass(frozen=True)
class WordTask(api.AgentTask):
    record: Word


def plan(view: api.BuildView, options: BaseModel) -> list[WordTask]:
    return [WordTask(w) for w in view.of_type(Word) if w.origin == "source"]


async def pluralize(task: WordTask, ctx: api.AgentContext) -> api.AgentResult:
    word = task.record
    template = ctx.template("en")
    result = await ctx.ask(template, {"word": word.text}, Plural)
    if result.value is None:
        return api.AgentResult([], "failed", failure=result.error)
    made = Word(id=f"{word.id}/pl", text=result.value.plural, origin="agent")
    return api.AgentResult([made], "made")


api.agent(api.AgentSpec(name="toy-pluralizer", run=pluralize, plan=plan))


class LengthOptions(BaseModel):
    max_chars: int = 8


async def drop_long(view, options, env) -> api.NodeUpdate:
    long = [k for k, w in view.records.items() if len(w.text) > options.max_chars]
    return api.NodeUpdate(removed=long, counts={"removed": len(long)})


api.filter_node(api.FilterSpec(name="toy-length", run=drop_long, options=LengthOptions))


class NoParams(BaseModel):
    pass


def build(view, tasks, options, resources) -> list[Item]:
    return [
        Item(
            id=w.id,
            task="TOY-VOWEL",
            prompt=PromptParts(template="toy/ask.md", vars={"word": w.text}),
            answer="T" if w.text[0] in "aeiou" else "F",
            meta={"origin": w.origin},
        )
        for w in view.of_type(Word)
    ]


api.bank_builder(
    api.BankBuilderSpec(
        name="toy", build=build, task_params={"TOY-VOWEL": NoParams}, options=NoParams
    )
)
api.task(
    api.TaskSpec(
        name="TOY-VOWEL", family="toy", extractor="tf", metric="acc",
        random_baseline=api.constant(0.5), breakdowns=("origin",),
    )
)  # fmt: skip
api.report_section(
    "toy", lambda manifest, summary: ["## Toy words", ""] if "TOY-VOWEL" in manifest.tasks else []
)

RECIPE = """
recipe: toy
source: toy-words
nodes:
  - name: plurals
    agent: toy-pluralizer
    prompt: toy/plural.md
  - name: dedup
    filter: minhash-dedup
    options: {fields: [text]}
  - name: short
    filter: toy-length
    options: {max_chars: 8}
  - name: banks
    builder: toy
    tasks: {TOY-VOWEL: {}}
"""


def agent_script(request) -> str:
    text = "\n".join(m.content for m in request.messages)
    word = re.search(r"The plural of the word: (\w+)", text).group(1)
    return json.dumps({"plural": word + "s"})


def answer_script(request) -> str:
    return "T"  # a model that always says T: right on exactly the vowel words


ScriptedBackend.register("toy-agent", agent_script)
ScriptedBackend.register("toy-answer", answer_script)


@pytest.fixture
def toy_recipe(in_tmp):
    (in_tmp / "prompts" / "toy").mkdir(parents=True)
    (in_tmp / "prompts" / "toy" / "plural.md").write_text("The plural of the word: {{ word }}")
    (in_tmp / "prompts" / "toy" / "ask.md").write_text(
        "Does '{{ word }}' start with a vowel? Answer T or F."
    )
    (in_tmp / "toy.yaml").write_text(RECIPE)
    (in_tmp / "words.txt").write_text("\n".join(WORDS))
    yield in_tmp
    for kind, name in (
        (SOURCES, "toy-words"), (AGENTS, "toy-pluralizer"), (FILTERS, "toy-length"),
        (BUILDERS, "toy"), (TASKS, "TOY-VOWEL"), (SECTIONS, "toy"),
    ):  # fmt: skip
        kind.unregister(name)


def test_a_recipe_registered_from_outside_builds_evaluates_and_reports(toy_recipe):
    build = asyncio.run(
        run_build(
            "toy.yaml",
            BuildOptions(
                source=toy_recipe / "words.txt",
                agent_model="scripted:toy-agent",
                run_dir=toy_recipe / "build",
            ),
        )
    )
    stages = build.manifest.stages
    assert stages["read"] == {"words": 7}
    assert stages["plurals"] == {"planned": 7, "made": 7}
    # "cat" and "cats" come twice; "umbrellas" shares 6 of its 7 character 3-grams with
    # "umbrella" (Jaccard 0.857) and "hippopotamuss" 10 of 11 with "hippopotamus" (0.909)
    dropped = [json.loads(line) for line in open(toy_recipe / "build" / "failures.jsonl")]
    assert [(f["id"], f["duplicates"], f["jaccard"]) for f in dropped] == [
        ("w3", "w1", 1.0), ("w3/pl", "w1/pl", 1.0), ("w5/pl", "w5", 0.857),
        ("w6/pl", "w6", 0.909),
    ]  # fmt: skip
    assert stages["dedup"] == {"before": 14, "kept": 10, "removed": 4}
    # "hippopotamus" is longer than 8 characters
    assert stages["short"] == {"removed": 1}
    assert stages["banks"] == {"items": 9}
    words = [json.loads(line)["prompt"]["vars"]["word"] for line in open(build.dataset_path)]
    assert words == ["apple", "cat", "owl", "dog", "umbrella", "apples", "cats", "owls", "dogs"]
    assert {f["stage"] for f in dropped} == {"dedup"} and build.manifest.counts.failed == 0

    result = asyncio.run(
        run_eval(
            toy_recipe / "build",
            EvalOptions(models=["scripted:toy-answer"], run_dir=toy_recipe / "eval"),
        )
    )
    assert result.manifest.status == "complete"
    summary = json.loads((toy_recipe / "eval" / "summary.json").read_text())
    acc = next(r for r in summary if r["task"] == "TOY-VOWEL" and r["metric"] == "acc")
    assert acc["n"] == 9 and acc["score"] == pytest.approx(5 / 9)  # apple(s) owl(s) umbrella
    report = (toy_recipe / "eval" / "report.md").read_text()
    assert "## Toy words" in report and "## Scores by origin" in report
