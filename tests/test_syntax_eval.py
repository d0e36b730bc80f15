"""Evaluating models on a syntax-QA build: the paper's tables (2, 7, 8-9, 10-12) in the report.

Scripted models whose answers are known in advance check the figures exactly; one slow test
runs the embedded model zero- and few-shot beside them, and one shows a model without a chat
template reading the paper's continuation prompt.
"""

from __future__ import annotations

import asyncio
import json
import re
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from scipy import stats

from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.syntax.metrics import overall
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "syntax"
GOLD: dict[str, str] = {}
"""The last user message of every item's prompt, to the answer a worked example would show."""


def _asked(request) -> str:
    return [m.content for m in request.messages if m.role == "user"][-1]


def _wrong(answer: str) -> str:
    return {"True": "False", "False": "True", "A": "B", "B": "C", "C": "D", "D": "A"}.get(
        answer, "the wrong words"
    )


def oracle(request) -> str:
    return f"The answer is “{GOLD[_asked(request)]}”."


def coin(request) -> str:
    """Right on about half of the questions (by a hash of the question), wrong on the rest."""
    answer = GOLD[_asked(request)]
    return answer if zlib.crc32(_asked(request).encode()) % 2 else _wrong(answer)


def stubborn(request) -> str:
    """Always True, always A, always the sentence's first word."""
    system = request.messages[0].content
    if "true or false" in system:
        return "True"
    if "multiple choice" in system:
        return "A"
    return _asked(request).split()[1]


def restater(request) -> str:
    """The answer quoted first, then the question restated with the phrase it quotes."""
    question = _asked(request).rsplit("Question: ", 1)[-1].splitlines()[0]
    return f"“{GOLD[_asked(request)]}”: {question.replace('_____', 'that')}"


for _name, _fn in (
    ("syntax-oracle", oracle),
    ("syntax-coin", coin),
    ("syntax-stubborn", stubborn),
    ("syntax-restater", restater),
):
    ScriptedBackend.register(_name, _fn)
SCRIPTED = ["scripted:syntax-oracle", "scripted:syntax-coin", "scripted:syntax-stubborn"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    from gramagents.templates import load_prompt

    folder = tmp_path_factory.mktemp("syntax-eval") / "build"
    result = asyncio.run(
        run_build("syntax-qa", BuildOptions(source=EXAMPLES, agents=False, run_dir=folder))
    )
    for item in result.items:
        messages = load_prompt(item.prompt.template).render(item.prompt.vars)
        shown = {"T": "True", "F": "False"}.get(item.answer, item.answer)
        GOLD[messages[-1].content] = shown
    return folder


def evaluate(dataset: Path, folder: Path, models: list[str], limit: int | None = None):
    return asyncio.run(run_eval(dataset, EvalOptions(models=models, run_dir=folder, limit=limit)))


def table(report: str, title: str) -> list[list[str]]:
    """The rows of the markdown table under the heading starting with `title`."""
    section = report.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def by_hand(scores: list[dict], model: str, point: str | None = None) -> dict:
    """Per setting and seed: TF, MC, FITB accuracy and FITB F1 from `scores.jsonl` itself."""
    sums: dict = defaultdict(lambda: defaultdict(list))
    for record in scores:
        if record["model"] != model or (point and record["meta"]["point"] != point):
            continue
        if point is None and "+" in record["item_id"]:
            continue  # MVP's copy of a question counts for MVP, not again overall
        setting = "few" if record["task"].endswith("-FEWSHOT") else "zero"
        kind = record["task"].split("-")[1]
        seed = record["meta"].get("seed", 0)
        sums[setting, seed][kind, "acc"].append(record["scores"]["acc"])
        if kind == "FITB":
            sums[setting, seed][kind, "f1"].append(record["scores"]["f1"])
    return {
        key: {metric: sum(v) / len(v) for metric, v in values.items()}
        for key, values in sums.items()
    }


def _oa(figures: dict) -> float:
    return overall(
        figures["TF", "acc"], figures["MC", "acc"], figures["FITB", "acc"], figures["FITB", "f1"]
    )


def test_scripted_models_fill_the_papers_tables(dataset, tmp_path):
    result = evaluate(dataset, tmp_path / "eval", SCRIPTED)
    report = result.report_path.read_text()
    scores = [json.loads(line) for line in (tmp_path / "eval" / "scores.jsonl").open()]

    zero = {row[0]: row[1:] for row in table(report, "Syntax-QA Table 2 layout: zero-shot")}
    assert zero["scripted:syntax-oracle"] == ["100.00"] * 5
    coin = by_hand(scores, "scripted:syntax-coin")[("zero", 0)]
    expected = [coin["TF", "acc"], coin["MC", "acc"], coin["FITB", "acc"], coin["FITB", "f1"]]
    assert zero["scripted:syntax-coin"] == [f"{100 * v:.2f}" for v in [*expected, _oa(coin)]]
    assert zero["Random"][:2] == ["50.00", "25.00"]

    few = {row[0]: row[1:] for row in table(report, "Syntax-QA Table 2 layout: few-shot")}
    assert few["scripted:syntax-oracle"] == ["100.00 ± 0.00"] * 5
    per_seed = [v for (s, _), v in by_hand(scores, "scripted:syntax-coin").items() if s == "few"]
    oas = [_oa(v) for v in per_seed]
    assert len(per_seed) == 3
    mean = sum(oas) / 3
    std = (sum((x - mean) ** 2 for x in oas) / 2) ** 0.5
    assert few["scripted:syntax-coin"][4] == f"{100 * mean:.2f} ± {100 * std:.2f}"


def test_oa_per_knowledge_point(dataset, tmp_path):
    result = evaluate(dataset, tmp_path / "eval", SCRIPTED)
    report = result.report_path.read_text()
    scores = [json.loads(line) for line in (tmp_path / "eval" / "scores.jsonl").open()]
    rows = table(report, "Syntax-QA Table 8 layout")
    header = report.split("## Syntax-QA Table 8 layout", 1)[1].splitlines()[2]
    points = [c.strip() for c in header.strip("|").split("|")][1:]
    assert points == ["GS", "SC", "DO", "IO", "MVP", "ADJ", "ADV", "CO", "PPA"]
    cells = {row[0]: dict(zip(points, row[1:], strict=True)) for row in rows}
    for point in points:
        figures = by_hand(scores, "scripted:syntax-stubborn", point)[("zero", 0)]
        assert cells["scripted:syntax-stubborn"][point] == f"{100 * _oa(figures):.2f}"
        assert cells["scripted:syntax-oracle"][point] == "100.00"


def test_correlations_between_question_types_across_models(dataset, tmp_path):
    result = evaluate(dataset, tmp_path / "eval", SCRIPTED)
    report = result.report_path.read_text()
    summary = json.loads((tmp_path / "eval" / "summary.json").read_text())

    def column(task: str, metric: str) -> list[float]:
        return [
            next(r["score"] for r in summary if (r["model"], r["task"], r["metric"]) ==
                 (model, task, metric))
            for model in SCRIPTED
        ]  # fmt: skip

    tf, mc = column("SYNTAX-TF", "acc"), column("SYNTAX-MC", "acc")
    fitb, f1 = column("SYNTAX-FITB", "acc"), column("SYNTAX-FITB", "f1")
    section = report.split("## Syntax-QA Table 7 layout", 1)[1]
    assert "zero-shot: 3 model(s) with all four scores." in section
    rows = table(report, "Syntax-QA Table 7 layout")[:8]  # the zero-shot table
    kendall = {row[1]: row[2:] for row in rows if row[0] == "Kendall"}
    pearson = {row[1]: row[2:] for row in rows if row[0] == "Pearson"}
    assert kendall["TF Acc."][1] == f"{stats.kendalltau(tf, mc).statistic:.3f}"
    assert pearson["MC Acc."][3] == f"{stats.pearsonr(mc, f1).statistic:.3f}"
    assert pearson["FITB Acc."][3] == f"{stats.pearsonr(fitb, f1).statistic:.3f}"
    assert kendall["TF Acc."][0] == "" and pearson["FITB F1"][3] == ""  # the diagonal


def test_limit_takes_the_same_questions_zero_and_few_shot(dataset, in_tmp):
    # `--limit N` counts questions (an item's `meta.question`), not items: a few-shot
    # question comes with all its seeds, and zero- and few-shot ask the same N questions
    from typer.testing import CliRunner

    from gramagents.cli import app

    outcome = CliRunner().invoke(
        app,
        ["eval", str(dataset), "--model", SCRIPTED[0], "--limit", "4", "--run-dir", "limited"],
    )
    assert outcome.exit_code == 0, outcome.output
    items = [json.loads(line) for line in (dataset / "dataset.jsonl").open()]
    question = {i["id"]: i["meta"]["question"] for i in items}
    scores = [json.loads(line) for line in (in_tmp / "limited" / "scores.jsonl").open()]
    for kind in ("TF", "MC", "FITB"):
        zero = [question[r["item_id"]] for r in scores if r["task"] == f"SYNTAX-{kind}"]
        few = [r for r in scores if r["task"] == f"SYNTAX-{kind}-FEWSHOT"]
        # four questions (a borrowed copy comes with its lender's question)
        assert len(set(zero)) == 4
        assert {question[r["item_id"]] for r in few} == set(zero)
        assert Counter(r["meta"]["seed"] for r in few) == {1: len(zero), 2: len(zero), 3: len(zero)}
        # the first questions of a task reach four different points
        assert len({r["meta"]["point"] for r in few}) >= 4


def test_one_model_gets_no_correlation_table(dataset, tmp_path):
    result = evaluate(dataset, tmp_path / "eval", SCRIPTED[:1], limit=9)
    report = result.report_path.read_text()
    assert "need at least three models evaluated in one run" in report


@pytest.mark.slow
def test_the_embedded_model_zero_and_few_shot_over_three_seeds(dataset, tmp_path):
    # one question per task (`--limit` counts questions): zero-shot one item, few-shot three
    result = evaluate(dataset, tmp_path / "eval", ["smollm2", *SCRIPTED[:2]], limit=1)
    assert result.manifest.status == "complete"
    report = result.report_path.read_text()
    responses = [json.loads(line) for line in (tmp_path / "eval" / "responses.jsonl").open()]
    assert sum(r["model"] == "smollm2" for r in responses) == 12
    few = [r for r in responses if r["model"] == "smollm2" and r["task"].endswith("FEWSHOT")]
    seeds = sorted(r["item_id"].rsplit("@s", 1)[1] for r in few)
    assert seeds == ["1", "1", "1", "2", "2", "2", "3", "3", "3"]  # each question's three seeds

    zero = {row[0]: row[1:] for row in table(report, "Syntax-QA Table 2 layout: zero-shot")}
    few_rows = {row[0]: row[1:] for row in table(report, "Syntax-QA Table 2 layout: few-shot")}
    assert re.fullmatch(r"\d+\.\d\d", zero["smollm2"][4])  # OA
    assert all(re.fullmatch(r"\d+\.\d\d ± \d+\.\d\d", c) for c in few_rows["smollm2"])
    per_point = table(report, "Syntax-QA Table 8 layout")
    assert [row[0] for row in per_point] == ["smollm2", *SCRIPTED[:2]]
    assert re.search(r"\| smollm2 \| (\d+\.\d\d|—)", "\n".join(report.splitlines()))
    correlations = report.split("## Syntax-QA Table 7 layout", 1)[1]
    assert "zero-shot: 3 model(s) with all four scores." in correlations
    assert table(report, "Syntax-QA Table 7 layout")[0][0] == "Kendall"


@pytest.mark.slow
def test_a_model_without_chat_template_reads_the_continuation_prompt(smollm2, monkeypatch):
    from dataclasses import replace

    from gramagents.models.hf import HFBackend
    from gramagents.records import ChatRequest, Message
    from gramagents.templates import load_prompt

    base_lm = replace(smollm2.lm, has_chat_template=False)
    monkeypatch.setattr(HFBackend, "lm", property(lambda self: base_lm))
    template = load_prompt("syntax/tf.md")
    question = "In the above sentence, the subject complement of “is” is “a teacher”."
    variables = {"sentence": "John is a teacher.", "shots": [], "question": question}
    request = ChatRequest(
        messages=template.render(variables), base_prompt=template.render_base(variables)
    )
    text = base_lm.tokenizer.decode(smollm2.render(request), skip_special_tokens=True)
    assert text == request.base_prompt and text.endswith("Answer: The answer is “")
    assert "<|im_start|>" not in base_lm.tokenizer.decode(smollm2.render(request))
    # with its chat template the same model reads the messages
    monkeypatch.undo()
    chat = smollm2.lm.tokenizer.decode(smollm2.render(request))
    assert "<|im_start|>system" in chat and "Answer: The answer is" not in chat
    assert Message(role="user", content=request.messages[-1].content).content in chat


FAMILY = [
    "scripted:syntax-stubborn?params=135M&family=toy",
    "scripted:syntax-coin?params=1.7B&family=toy",
    "scripted:syntax-oracle?params=360M&family=toy",
]


def test_a_family_of_models_is_shown_against_the_number_its_specs_carry(dataset, tmp_path):
    from gramagents.recipes.syntax.series import series_charts
    from gramagents.report.summary import summarize

    result = evaluate(dataset, tmp_path / "eval", FAMILY)
    report = result.report_path.read_text()
    rows = table(report, "Syntax-QA series: OA against parameters (zero-shot)")
    # ordered by size, each row the model's OA overall and per point (Table 8's cells)
    assert [r[:3] for r in rows] == [
        ["toy", "135M", FAMILY[0]], ["toy", "360M", FAMILY[2]], ["toy", "1.7B", FAMILY[1]]
    ]  # fmt: skip
    header = report.split("## Syntax-QA series: OA against parameters (zero-shot)", 1)[1]
    points = [c.strip() for c in header.splitlines()[4].strip("|").split("|")][4:]
    per_point = {row[0]: row[1:] for row in table(report, "Syntax-QA Table 8 layout")}
    overall = {row[0]: row[5] for row in table(report, "Syntax-QA Table 2 layout: zero-shot")}
    for row in rows:
        assert row[3] == overall[row[2]] and row[4:] == per_point[row[2]]
    assert points == ["GS", "SC", "DO", "IO", "MVP", "ADJ", "ADV", "CO", "PPA"]
    # the viewer's chart: one line per point and one for all points, x the parameter count
    summary = summarize(tmp_path / "eval" / "scores.jsonl")
    charts = series_charts(result.manifest, summary)
    titles = [c.title for c in charts]
    assert "Syntax-QA OA against parameters (few-shot)" in titles
    spec = charts[0].vega_lite()
    values = spec["data"]["values"]
    assert sorted({v["x"] for v in values}) == [1.35e8, 3.6e8, 1.7e9]
    assert {v["point"] for v in values} == {"all points", *points}
    assert spec["encoding"]["x"]["scale"]["type"] == "log"
    assert "Syntax-QA OA against parameters" in (tmp_path / "eval" / "report.html").read_text()


def test_a_series_number_that_is_no_number_is_one_clear_error(dataset, in_tmp):
    from typer.testing import CliRunner

    from gramagents.cli import app

    outcome = CliRunner().invoke(
        app, ["eval", str(dataset), "--model", "scripted:syntax-oracle?params=big", "--limit", "1"]
    )
    assert outcome.exit_code != 0 and "Traceback" not in outcome.output
    assert "params must be a number such as 7B or 220000, not 'big'" in outcome.output


def test_a_fill_in_answer_followed_by_the_question_restated_is_read_as_the_answer(
    dataset, tmp_path
):
    evaluate(dataset, tmp_path / "eval", ["scripted:syntax-restater"])
    fitb = [
        json.loads(line)
        for line in (tmp_path / "eval" / "scores.jsonl").open()
        if '"SYNTAX-FITB' in line
    ]
    assert fitb
    assert [r["item_id"] for r in fitb if r["scores"]["acc"] != 1.0] == []
