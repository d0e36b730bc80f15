from pathlib import Path

import pytest

from gramagents.agents.base import AgentContext
from gramagents.errors import InputError
from gramagents.records import GenParams
from gramagents.workflow.recipe import AgentNode, BuilderNode, load_recipe

GOOD = """\
recipe: cpg
source: grammar-table
nodes:
  - name: rewrite
    agent: instance-rewriter
    prompt: cpg/rewrite.{language}.md
  - name: banks
    builder: cpg
    tasks:
      SINGLE-T: {}
      SINGLE-F: {negatives_per_sentence: 2}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_packaged_cpg_recipe_loads_by_name():
    recipe, path = load_recipe("cpg")
    assert path.name == "cpg.yaml"
    assert [type(n) for n in recipe.nodes] == [AgentNode] * 4 + [BuilderNode]
    assert list(recipe.builder.tasks) == [
        "SINGLE-T",
        "SINGLE-F",
        "BATCH-T",
        "BATCH-F",
        "SIM-GRA",
        "CAT-GRA",
        "CON-INS-F10",
        "CON-INS-T5F5",
    ]


def test_a_valid_recipe_file_loads(tmp_path):
    recipe, _ = load_recipe(str(write(tmp_path, GOOD)))
    assert recipe.builder.tasks["SINGLE-F"] == {"negatives_per_sentence": 2}
    assert recipe.agents.model == "smollm2"


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "words"),
    [
        (
            "    prompt: cpg",
            "    promt: cpg",
            6,
            "nodes[0].promt",
            "unknown key (did you mean 'prompt'?)",
        ),
        (
            "source: grammar-table",
            "source: grammar-table\nsed: 3",
            3,
            "sed",
            "unknown key (did you mean 'seed'?)",
        ),
        (
            "agent: instance-rewriter",
            "agent: instance-rewritter",
            5,
            "nodes[0].agent",
            "unknown agent",
        ),
        ("      SINGLE-T: {}", "      SINGLE-X: {}", 10, "nodes[1].tasks.SINGLE-X", "unknown task"),
        (
            "{negatives_per_sentence: 2}",
            "{negatives_per_sentence: 0}",
            11,
            "nodes[1].tasks.SINGLE-F.negatives_per_sentence",
            "greater than or equal to 1",
        ),
        (
            "{negatives_per_sentence: 2}",
            "{negatives: 2}",
            11,
            "nodes[1].tasks.SINGLE-F.negatives",
            "unknown key",
        ),
        (
            "prompt: cpg/rewrite.{language}.md",
            "prompt: cpg/nothing.{language}.md",
            6,
            "nodes[0].prompt",
            "not found",
        ),
        ("    builder: cpg", "    builder: cpx", 8, "nodes[1].builder", "unknown bank builder"),
        ("  - name: banks", "  - name: rewrite", 7, "nodes[1].name", "used twice"),
    ],
)
def test_recipe_errors_name_line_and_field(tmp_path, old, new, line, field, words):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(InputError) as caught:
        load_recipe(str(path))
    assert (caught.value.line, caught.value.field) == (line, field)
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: field '{field}'")


def test_builder_must_be_last(tmp_path):
    text = GOOD.replace(
        "nodes:\n", "nodes:\n  - name: b0\n    builder: cpg\n    tasks: {SINGLE-T: {}}\n"
    )
    with pytest.raises(InputError, match="last node"):
        load_recipe(str(write(tmp_path, text)))


def test_missing_recipe_file():
    with pytest.raises(InputError, match="not found"):
        load_recipe("graphs/none.yaml")


def test_every_declared_language_needs_its_prompt(tmp_path):
    path = write(
        tmp_path,
        GOOD.replace("source: grammar-table\n", "source: grammar-table\nlanguages: [en, zh, fr]\n"),
    )
    with pytest.raises(InputError) as caught:
        load_recipe(str(path))
    assert caught.value.field == "nodes[0].prompt"
    assert "for language 'fr'" in str(caught.value)
    recipe, _ = load_recipe(str(write(tmp_path, GOOD)))
    assert recipe.languages == ["en"]  # undeclared: the prompts are in English


def test_a_prompt_name_with_other_braces_is_a_prompt_not_found(tmp_path):
    text = GOOD.replace("cpg/rewrite.{language}.md", "cpg/rewrite.{language}.{v}.md")
    with pytest.raises(InputError) as caught:
        load_recipe(str(write(tmp_path, text)))
    assert caught.value.field == "nodes[0].prompt"
    assert "prompt 'cpg/rewrite.{language}.{v}.md' not found for language 'en'" in str(caught.value)


def test_an_agent_reads_the_prompt_of_its_points_language_else_the_first():
    recipe, _ = load_recipe("cpg")
    assert recipe.languages == ["en", "zh"]
    context = AgentContext(
        model=None,  # type: ignore[arg-type]  # no call is made
        prompt="cpg/rewrite.{language}.md",
        params=GenParams(),
        max_reasks=0,
        languages=tuple(recipe.languages),
    )
    assert context.template("zh").path.name == "rewrite.zh.md"
    assert context.template("en").path.name == "rewrite.en.md"
    assert context.template("ja").path.name == "rewrite.en.md"
