"""The GEC recipe: grammar-item lists, minimal-pair agents, M2 files, and M2-scored evals."""

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gramagents.errors import GramagentsError, InputError
from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.gec.items import read_grammar_items
from gramagents.recipes.gec.m2 import M2Edit, M2Sentence, parse_m2, write_m2
from gramagents.records import ChatRequest
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT

ITEMS = ROOT / "examples" / "gec" / "grammar-items.jsonl"
BIN = Path(sys.executable).parent
CORRECTIONS_ONLY = (
    (ROOT / "graphs" / "gec.yaml")
    .read_text(encoding="utf-8")
    .replace("      GEC-PAIR: {conditioning: spaced}\n", "")
)


def test_the_example_list_has_three_items_per_level_a1_to_b2():
    items = read_grammar_items(ITEMS)
    for level in ("A1", "A2", "B1", "B2"):
        assert sum(i.level == level for i in items) >= 3
    assert all(len(i.pairs) == 3 for i in items)


def test_csv_lists_hold_one_pair_per_row(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text(
        "id,level,name,notes,ungrammatical,correction,alternatives\n"
        "7,b1,which,,I saw a film what was long.,I saw a film which was long.,"
        "I saw a film that was long.\n"
        "7,B1,which,,It is a dog what barks.,It is a dog which barks.,\n"
        "8,A1,plural -s,,,,\n",
        encoding="utf-8",
    )
    first, second = read_grammar_items(path)
    assert first.level == "B1" and len(first.pairs) == 2 and not second.pairs
    assert first.pairs[0].alternatives == ["I saw a film that was long."]


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ('{"id": "1", "level": "D1", "name": "x"}', "level", "CEFR level"),
        (
            '{"id": "1", "level": "A1", "name": "x", "pairs": [{"ungrammatical": "a b", '
            '"correction": "a b"}]}',
            "pairs[0].correction",
            "repeats",
        ),
        ('{"id": "1", "level": "A1", "nme": "x"}', "nme", "unknown field"),
    ],
)
def test_bad_item_lists_name_line_and_field(tmp_path, line, field, words):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "0", "level": "A1", "name": "ok"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_grammar_items(path)
    assert (caught.value.line, caught.value.field) == (2, field)
    assert words in str(caught.value)


@pytest.fixture
def built(tmp_path):
    recipe = tmp_path / "gec.yaml"
    recipe.write_text(CORRECTIONS_ONLY, encoding="utf-8")
    return asyncio.run(
        run_build(str(recipe), BuildOptions(source=ITEMS, agents=False, run_dir=tmp_path / "b"))
    )


def test_the_build_writes_one_m2_file_per_item(built):
    folder = built.folder.path
    index = json.loads((folder / "m2" / "index.json").read_text())
    items = read_grammar_items(ITEMS)
    assert [e["item"] for e in index] == [i.id for i in items]
    for entry, item in zip(index, items, strict=True):
        sentences = parse_m2((folder / "m2" / entry["file"]).read_text())
        assert len(sentences) == len(item.pairs) == entry["sentences"]
        for sentence, pair in zip(sentences, item.pairs, strict=True):
            annotators = {e.annotator for e in sentence.edits}
            assert annotators == set(range(1 + len(pair.alternatives)))
    assert built.manifest.artifacts == {"m2_files": len(items)}
    assert {i.task for i in built.items} == {"GEC-BASELINE", "GEC-GUIDED"}


def corrector(request: ChatRequest) -> str:
    """Guided prompt: the Step 2 correction; baseline: a Step 3 alternative when there is one."""
    prompt = request.messages[-1].content
    text = re.search(r"following text\.\n(.+)\n", prompt).group(1)
    pair = PAIRS[text]
    if "in today's class" in prompt or not pair.alternatives:
        return pair.correction
    return pair.alternatives[-1]


PAIRS = {p.ungrammatical: p for i in read_grammar_items(ITEMS) for p in i.pairs}


def errant_compare(hyp: Path, ref: Path) -> tuple[float, float, float]:
    out = subprocess.run(
        [str(BIN / "errant_compare"), "-hyp", str(hyp), "-ref", str(ref)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    numbers = re.search(r"F0.5\n(.+)\n", out).group(1).split("\t")
    return tuple(float(x) for x in numbers[3:])  # type: ignore[return-value]


def evaluate_corrector(built, tmp_path) -> None:
    ScriptedBackend.register("corrector", corrector)
    result = asyncio.run(
        run_eval(
            built.folder.path, EvalOptions(models=["scripted:corrector"], run_dir=tmp_path / "e")
        )
    )
    assert result.manifest.status == "complete"


def test_corrections_are_scored_per_item_and_level(built, tmp_path):
    evaluate_corrector(built, tmp_path)
    summary = {
        (r["task"], r["metric"]): r["score"]
        for r in json.loads((tmp_path / "e" / "summary.json").read_text())
    }
    assert summary["GEC-GUIDED", "f0.5"] == summary["GEC-GUIDED", "targeted_recall_single"] == 1.0
    assert summary["GEC-BASELINE", "targeted_recall_all"] == 1.0
    assert summary["GEC-BASELINE", "targeted_recall_single"] < 1.0  # it used Step 3 ones
    report = (tmp_path / "e" / "report.md").read_text()
    for title in ("CTSEG Table 3 layout", "CTSEG Table 4 layout", "CTSEG Table 6 layout"):
        assert title in report
    assert "| scripted:corrector | Grammar-item-guided | 100.00 | 100.00 |" in report


@pytest.mark.slow  # errant_compare twice per grammar item, each a process that loads spaCy
def test_corrections_are_scored_per_item_as_errant_does(built, tmp_path):
    """The same numbers from errant_compare, item by item, on M2 files of the run's
    corrections."""
    evaluate_corrector(built, tmp_path)
    records = [json.loads(x) for x in (tmp_path / "e" / "scores.jsonl").read_text().splitlines()]
    from gramagents.report.summary import summarize

    items = {
        i["item"]: i
        for i in summarize(tmp_path / "e" / "scores.jsonl")
        .aggregates["scripted:corrector", "GEC-BASELINE"]
        .tables["items"]
    }
    for point, entry in items.items():
        mine = sorted(
            (r for r in records if r["task"] == "GEC-BASELINE" and r["meta"]["point"] == point),
            key=lambda r: r["meta"]["position"],
        )
        refs = parse_m2((built.folder.path / "m2" / f"{point}.m2").read_text())
        hyp = tmp_path / f"{point}.hyp.m2"
        hyp.write_text(
            write_m2(
                M2Sentence(ref.source, [M2Edit(*e, 0) for e in r["details"]["hypothesis"]])
                for ref, r in zip(refs, mine, strict=True)
            )
        )
        assert errant_compare(hyp, built.folder.path / "m2" / f"{point}.m2") == (
            entry["p"],
            entry["r"],
            entry["f0.5"],
        )
        step2 = tmp_path / f"{point}.step2.m2"
        step2.write_text(
            write_m2(M2Sentence(r.source, [e for e in r.edits if e.annotator == 0]) for r in refs)
        )
        assert errant_compare(hyp, step2)[1] == entry["r_single"]


def test_minimal_pair_tasks_need_a_local_model(tmp_path):
    asyncio.run(run_build("gec", BuildOptions(source=ITEMS, agents=False, run_dir=tmp_path / "b")))
    ScriptedBackend.register("corrector", corrector)
    with pytest.raises(GramagentsError, match="GEC-PAIR compare log-likelihoods") as raised:
        asyncio.run(
            run_eval(
                tmp_path / "b", EvalOptions(models=["scripted:corrector"], run_dir=tmp_path / "e")
            )
        )
    assert "--pairs choice" in str(raised.value)
    assert not (tmp_path / "e").exists()


def test_gec_pairs_asked_as_a_forced_choice_need_no_log_probabilities(tmp_path):
    asyncio.run(run_build("gec", BuildOptions(source=ITEMS, agents=False, run_dir=tmp_path / "b")))

    def chooser(request: ChatRequest) -> str:
        prompt = request.messages[-1].content
        if not prompt.startswith("Here are two English sentences."):
            return corrector(request)
        first = re.search(r"^1\. (.+)$", prompt, re.MULTILINE).group(1)
        return "2" if first in PAIRS else "1"  # never the ungrammatical sentence

    ScriptedBackend.register("chooser", chooser)
    options = EvalOptions(models=["scripted:chooser"], run_dir=tmp_path / "e", pairs="choice")
    result = asyncio.run(run_eval(tmp_path / "b", options))
    assert result.manifest.status == "complete"
    assert "GEC-PAIR-CHOICE" in result.manifest.tasks and "GEC-PAIR" not in result.manifest.tasks
    assert result.manifest.pairs == {"GEC-PAIR": "choice"}
    summary = json.loads((tmp_path / "e" / "summary.json").read_text())
    scores = {r["metric"]: r["score"] for r in summary if r["task"] == "GEC-PAIR-CHOICE"}
    assert scores["acc"] == scores["acc_strict"] == scores["consistency"] == 1.0


@pytest.mark.parametrize("conditioning", ["bare", "spaced", None])
def test_the_recipe_says_how_gec_pairs_are_scored(tmp_path, conditioning):
    recipe = tmp_path / "gec.yaml"
    line = "GEC-PAIR: {}" if conditioning is None else f"GEC-PAIR: {{conditioning: {conditioning}}}"
    recipe.write_text(
        (ROOT / "graphs" / "gec.yaml")
        .read_text(encoding="utf-8")
        .replace("      GEC-BASELINE: {}\n      GEC-GUIDED: {}\n", "")
        .replace("GEC-PAIR: {conditioning: spaced}", line),
        encoding="utf-8",
    )
    result = asyncio.run(
        run_build(str(recipe), BuildOptions(source=ITEMS, agents=False, run_dir=tmp_path / "b"))
    )
    assert {i.task for i in result.items} == {"GEC-PAIR"}
    assert {i.prompt.vars["conditioning"] for i in result.items} == {conditioning or "spaced"}


def test_a_conditioning_that_is_not_one_is_refused_with_the_recipe_line(tmp_path):
    recipe = tmp_path / "gec.yaml"
    recipe.write_text(
        (ROOT / "graphs" / "gec.yaml")
        .read_text(encoding="utf-8")
        .replace("GEC-PAIR: {conditioning: spaced}", "GEC-PAIR: {conditioning: lm-eval}"),
        encoding="utf-8",
    )
    with pytest.raises(GramagentsError) as caught:
        asyncio.run(
            run_build(str(recipe), BuildOptions(source=ITEMS, agents=False, run_dir=tmp_path / "b"))
        )
    assert "conditioning" in str(caught.value) and "gec.yaml" in str(caught.value)
    assert not (tmp_path / "b").exists()


def pair_agent(request: ChatRequest) -> str:
    prompt = next(m.content for m in request.messages if m.role == "user")
    if "error_limited_to_item" in prompt:
        good = "G07" not in prompt and "to-infinitive" not in prompt
        return json.dumps(
            {
                "error_limited_to_item": good,
                "alternatives_complete": True,
                "learner_style": True,
                "common_error": True,
                "reason": "fine" if good else "two errors",
            }
        )
    return json.dumps(
        {
            "ungrammatical": f"He go to school {request.sample} times.",
            "correction": f"He goes to school {request.sample} times.",
            "alternatives": [],
        }
    )


def test_pair_agents_fill_items_up_and_checks_reject(tmp_path):
    ScriptedBackend.register("pairs", pair_agent)
    recipe = tmp_path / "gec.yaml"
    recipe.write_text(CORRECTIONS_ONLY.replace("per_item: 3", "per_item: 4"), encoding="utf-8")
    result = asyncio.run(
        run_build(
            str(recipe),
            BuildOptions(source=ITEMS, agent_model="scripted:pairs", run_dir=tmp_path / "b"),
        )
    )
    stages = result.manifest.stages
    assert stages["pairs"] == {"planned": 14, "generated": 14}
    assert stages["pair-check"] == {"planned": 14, "accepted": 13, "rejected": 1}
    generated = {i.id: i for i in result.instances if i.origin == "agent"}
    assert generated["G07/pair-gen/0"].status == "rejected"
    assert generated["G01/pair-gen/0"].annotations["correction"] == "He goes to school 0 times."
    index = json.loads((tmp_path / "b" / "m2" / "index.json").read_text())
    sentences = {e["item"]: e["sentences"] for e in index}
    assert sentences["G01"] == 4 and sentences["G07"] == 3
    assert (tmp_path / "b" / "review.csv").read_text(encoding="utf-8-sig").count("\n") == 1 + 1 + 10


@pytest.mark.slow
def test_the_embedded_model_builds_pairs_m2_files_and_a_review_file(tmp_path):
    recipe = tmp_path / "gec.yaml"
    recipe.write_text(CORRECTIONS_ONLY.replace("per_item: 3", "per_item: 4"), encoding="utf-8")
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "build",
            str(recipe),
            "--source",
            str(ITEMS),
            "--run-dir",
            str(tmp_path / "b"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    stages = manifest["stages"]
    assert stages["pairs"]["planned"] == 14
    made = stages["pairs"].get("generated", 0)
    assert made + stages["pairs"].get("failed", 0) == 14
    checked = stages.get("pair-check", {"planned": 0})
    assert (
        checked["planned"]
        == made
        == sum(checked.get(k, 0) for k in ("accepted", "rejected", "failed"))
    )
    index = json.loads((tmp_path / "b" / "m2" / "index.json").read_text())
    assert len(index) == 14 and all(e["sentences"] >= 3 for e in index)
    review = tmp_path / "b" / "review.csv"
    if made:
        before = (tmp_path / "b" / "dataset.jsonl").read_bytes()
        again = subprocess.run(
            [sys.executable, "-m", "gramagents", "review", str(tmp_path / "b"), str(review)],
            capture_output=True,
            text=True,
        )
        assert again.returncode == 0, again.stderr
        assert (tmp_path / "b" / "dataset.jsonl").read_bytes() == before
