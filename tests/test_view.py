"""The run viewer (`gramagents view`, every run's `report.html`): what the site holds.

Fast tests write run folders by hand (records out of order, a failure, a partial last line,
an item the dataset lost); slow ones render real eval and build runs and compare the site
with the run's own files.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import app
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import BuildManifest, EvalManifest, Item, PromptParts
from gramagents.report.charts import CHARTS, Figure, report_chart
from gramagents.report.markdown import FILE_SECTIONS, SECTIONS, report_files, report_section
from gramagents.report.view import write_view
from gramagents.report.view.serve import address, make_server
from gramagents.runtime.rundir import write_jsonl_atomic
from gramagents.templates import load_prompt
from gramagents.workflow.build import BuildOptions, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import EXAMPLE_TABLE
from .view_helpers import data, details_of, matching, rows_of, tables

# --- a run folder written by hand -------------------------------------------------------------


def response(model: str, item: str, raw: str | None, **more) -> dict:
    return {
        "model": model,
        "item_id": item,
        "task": more.pop("task", "SINGLE-T"),
        "sample": 0,
        "raw": raw,
        "extracted": more.pop("extracted", raw),
        "rule": more.pop("rule", "exact"),
        "latency_s": more.pop("latency", 0.25),
        "cached": more.pop("cached", False),
        "error": more.pop("error", None),
        "prompt_hash": more.pop("prompt_hash", None),
        "logprobs": None,
    }


def score(model: str, item: str, gold: str, extracted: str | None, **more) -> dict:
    invalid = extracted is None
    return {
        "model": model,
        "item_id": item,
        "task": more.pop("task", "SINGLE-T"),
        "gold": gold,
        "extracted": extracted,
        "invalid": invalid,
        "scores": {"acc": float(extracted == gold)},
        "details": {},
        "meta": more.pop("meta", {"category": "c1", "level": 1}),
    }


def lines(records: list[dict], partial: str = "") -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records) + partial


@pytest.fixture
def hand_run(tmp_path: Path) -> Path:
    """Six items, two models; records out of dataset order; one failure; one orphan response;
    a partial last line; a record of an item the dataset no longer has."""
    run = tmp_path / "run"
    run.mkdir()
    template = load_prompt("raw.md")
    items = [
        Item(
            id=f"q{k}",
            task="SINGLE-T",
            prompt=PromptParts(template="raw.md", vars={"text": f"Is sentence {k} right?"}),
            answer="T",
            meta={"category": f"c{k % 2}", "level": 1 + k % 3},
        )
        for k in range(6)
    ]
    write_jsonl_atomic(run / "dataset.jsonl", items)
    manifest = EvalManifest(
        run_id="hand",
        kind="eval",
        command=[],
        models=["m-a", "m-b"],
        seed=1,
        status="partial",
        tasks={"SINGLE-T": 6},
        dataset={"path": str(run / "dataset.jsonl"), "format": "gramagents", "items": 6},
        random_baselines={"SINGLE-T": 0.5},
    )
    (run / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    h = template.hash
    responses = [
        response("m-b", "q3", "F", prompt_hash=h),
        response("m-a", "q0", "T", prompt_hash=h, cached=True),
        response("m-a", "q1", "maybe", extracted=None, rule="invalid", prompt_hash=h),
        response("m-b", "q0", "T", prompt_hash=h),
        response("m-a", "q3", "T", prompt_hash="old-hash"),
        response("m-b", "q1", "T", prompt_hash=h),
        response("m-a", "gone", "T"),
        response("m-a", "q4", "T", prompt_hash=h),  # its score line was lost: an orphan
    ]
    scores = [
        score("m-b", "q3", "T", "F"),
        score("m-a", "q0", "T", "T"),
        score("m-a", "q1", "T", None),
        score("m-b", "q0", "T", "T"),
        score("m-a", "q3", "T", "T"),
        score("m-b", "q1", "T", "T"),
        score("m-a", "gone", "T", "T", meta={"category": "c9"}),
    ]
    failures = [response("m-b", "q2", None, error="timeout", rule=None, extracted=None)]
    (run / "responses.jsonl").write_text(lines(responses), encoding="utf-8")
    (run / "scores.jsonl").write_text(lines(scores, partial='{"model": "m-b", "item'), "utf-8")
    (run / "failures.jsonl").write_text(lines(failures), encoding="utf-8")
    return run


def test_items_come_in_dataset_order_with_each_model_s_answer(hand_run):
    result = write_view([hand_run])
    assert result.page == hand_run / "report.html" and result.items == {"hand": 7}
    index = data(hand_run, "run0/items/index")
    assert index["models"] == ["m-a", "m-b"] and index["problem"] is None
    rows = rows_of(hand_run, "run0/items")
    assert [r[0] for r in rows] == ["q0", "q1", "q2", "q3", "q4", "q5", "gone"]
    # q4: a response without its score; q5: never answered; gone: not in the dataset any more
    assert index["flags"]["m0"] == "ci-cf-c"
    assert index["flags"]["m1"] == "ccfw---"
    assert index["flags"]["disagree"] == "-d-d---"  # an unreadable answer differs from T
    assert rows[3] == ["q3", "Is sentence 3 right?", "T", ["T", "F"]]

    details = details_of(hand_run, "run0/items")
    q0 = details[0]
    assert q0["prompt"]["messages"] == [{"role": "user", "content": "Is sentence 0 right?"}]
    a, b = q0["answers"]
    assert (a["raw"], a["rule"], a["latency"], a["cached"], a["outcome"]) == (
        "T",
        "exact",
        0.25,
        True,
        "c",
    )
    assert b["cached"] is False
    assert details[1]["answers"][0]["extracted"] is None and details[1]["answers"][0]["rule"] == (
        "invalid"
    )
    assert details[2]["answers"][1]["error"] == "timeout" and details[2]["answers"][0] is None
    # the template's hash differs from the one m-a's answer to q3 recorded: the page says so
    q3 = details[3]
    assert q3["prompt"]["hash"] != q3["answers"][0]["prompt_hash"]
    assert details[6]["prompt"] == {"error": "the item is not in the dataset"}
    assert details[6]["meta"] == {"category": "c9"}


def test_an_item_has_an_address_and_the_site_the_ids_to_find_it(hand_run):
    from gramagents.report.view.markup import item_address

    write_view([hand_run])
    ids = data(hand_run, "run0/items/ids")  # loaded only when an address asks for an item
    assert ids == [r[0] for r in rows_of(hand_run, "run0/items")]
    assert (
        item_address("SIM-GRA/1001/ex/0@3shot")
        == "report.html#item=SIM-GRA%2F1001%2Fex%2F0%403shot"
    )
    assert item_address("1_memory/初中#1", "evals/edu/report.html") == (
        "evals/edu/report.html#item=1_memory%2F%E5%88%9D%E4%B8%AD%231"
    )
    app = (hand_run / "view" / "app.js").read_text(encoding="utf-8")
    assert 'hash.startsWith("item=")' in app and '"/ids"' in app


def test_filters_select_rows_as_the_page_does(hand_run):
    write_view([hand_run])
    index = data(hand_run, "run0/items/index")
    ids = [r[0] for r in rows_of(hand_run, "run0/items")]

    def chosen(**filters):
        return [ids[i] for i in matching(index, **filters)]

    assert chosen(category="c1") == ["q1", "q3", "q5"]
    assert chosen(model=0, outcome="c") == ["q0", "q3", "gone"]
    assert chosen(outcome="w") == ["q3"]  # any model
    assert chosen(model=1, outcome="f") == ["q2"]
    assert chosen(model=0, outcome="i", level="2") == ["q1"]
    assert chosen(disagree=True) == ["q1", "q3"]


def test_the_overview_tables_hold_the_summary(hand_run):
    write_view([hand_run])
    found = tables(hand_run / "report.html")
    scores = found["scores"]
    assert scores["header"] == ["model", "SINGLE-T (acc)", "Average (acc)"]
    random, a, b = scores["rows"]
    assert random[:2] == ["RANDOM", 0.5]
    # m-a: q0 right, q1 invalid, q3 right, gone right; m-b: q0 right, q1 right, q3 wrong
    assert a[0] == "m-a" and a[1] == pytest.approx(0.75)
    assert b[0] == "m-b" and b[1] == pytest.approx(2 / 3)


def test_a_repeated_dataset_line_is_shown_and_counted_once(hand_run):
    dataset = hand_run / "dataset.jsonl"
    first = dataset.read_text(encoding="utf-8").splitlines()[0]
    dataset.write_text(dataset.read_text(encoding="utf-8") + first + "\n", encoding="utf-8")
    result = write_view([hand_run])  # no summary given: the page counts the scores itself
    assert result.items == {"hand": 7}
    assert [r[0] for r in rows_of(hand_run, "run0/items")].count("q0") == 1
    a = tables(hand_run / "report.html")["scores"]["rows"][1]
    assert a[0] == "m-a" and a[1] == pytest.approx(0.75)  # as report.md: q0 counted once


def test_a_missing_dataset_still_lists_the_answered_items(hand_run):
    (hand_run / "dataset.jsonl").unlink()
    write_view([hand_run])
    index = data(hand_run, "run0/items/index")
    assert "not found" in index["problem"]
    ids = [r[0] for r in rows_of(hand_run, "run0/items")]
    assert sorted(ids) == ["gone", "q0", "q1", "q2", "q3", "q4"]


def test_recipes_add_sections_and_charts(hand_run):
    def section(manifest, summary):
        return ["## Toy table", "", "| point | acc |", "|---|---|", "| p1 | 0.5 |"]

    def chart(manifest, summary):
        spec = {"mark": "point", "data": {"values": [{"x": 1, "y": 2}]}, "encoding": {}}
        return [Figure("Toy chart", spec, caption="from a recipe")]

    report_section("toy-view", section)
    report_chart("toy-view", chart)
    try:
        write_view([hand_run])
    finally:
        SECTIONS.unregister("toy-view")
        CHARTS.unregister("toy-view")
    page = (hand_run / "report.html").read_text(encoding="utf-8")
    assert '<section class="card md" data-section="toy-view">' in page
    assert "<h2>Toy table</h2>" in page and "<td>p1</td>" in page
    assert "<h3>Toy chart</h3>" in page and '"values":[{"x":1,"y":2}]' in page


def test_a_section_with_files_shows_its_plot_inside_the_page(hand_run, tmp_path):
    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect/></svg>'

    def section(folder, manifest, summary):
        (folder / "toy").mkdir(exist_ok=True)
        (folder / "toy" / "plot.svg").write_text(svg, encoding="utf-8")
        return ["## Toy figure", "", "![plot](toy/plot.svg)", "", "![gone](toy/missing.svg)"]

    report_files("toy-files", section)
    try:
        write_view([hand_run], out=tmp_path / "site")
    finally:
        FILE_SECTIONS.unregister("toy-files")
    page = (tmp_path / "site" / "report.html").read_text(encoding="utf-8")
    assert '<section class="card md" data-section="toy-files">' in page
    encoded = base64.b64encode(svg.encode()).decode()
    assert f'<img src="data:image/svg+xml;base64,{encoded}"' in page  # shown away from the run
    assert '<img src="toy/missing.svg"' in page  # a file that is not there keeps its path


def test_a_failed_write_leaves_the_previous_site(hand_run, monkeypatch):
    import gramagents.report.view.site as site

    write_view([hand_run])
    before = (hand_run / "view" / "data" / "run0" / "items" / "index.js").read_bytes()

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(site, "render_page", broken)
    with pytest.raises(RuntimeError):
        write_view([hand_run])
    assert (hand_run / "view" / "data" / "run0" / "items" / "index.js").read_bytes() == before
    assert not [p for p in hand_run.iterdir() if p.name.startswith(".view")]


def test_view_command_and_its_errors(hand_run, tmp_path):
    runner = CliRunner()
    out = tmp_path / "site"
    result = runner.invoke(app, ["view", str(hand_run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert f"view: {out / 'report.html'} (hand 7 items; largest file" in result.output
    assert (out / "view" / "vega.js").stat().st_size > 100_000
    bad = runner.invoke(app, ["view", str(tmp_path / "nothing")])
    assert bad.exit_code == 2
    assert bad.output.strip().splitlines() == [f"error: {tmp_path / 'nothing'}: not a run folder"]


def test_serving_the_site_on_localhost(hand_run):
    write_view([hand_run])
    server = make_server(hand_run)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = address(server)
        assert url.startswith("http://127.0.0.1:") and url.endswith("/report.html")
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.status == 200 and b"<title>hand" in reply.read()
        index = url.replace("report.html", "view/data/run0/items/index.js")
        with urllib.request.urlopen(index, timeout=10) as reply:
            assert reply.read().startswith(b'gvData("run0/items/index",')
    finally:
        server.shutdown()
        server.server_close()


def test_several_runs_side_by_side(hand_run, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    for name in ("dataset.jsonl", "responses.jsonl", "scores.jsonl"):
        (other / name).write_bytes((hand_run / name).read_bytes())
    manifest = json.loads((hand_run / "manifest.json").read_text())
    manifest.update(run_id="other", seed=2, dataset={**manifest["dataset"]})
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = write_view([hand_run, other], out=tmp_path / "both")
    assert result.items == {"hand": 7, "other": 7}
    found = tables(result.page)
    compared = found["comparison"]
    assert [r[:2] for r in compared["rows"]] == [
        ["hand", "m-a"],
        ["hand", "m-b"],
        ["other", "m-a"],
        ["other", "m-b"],
    ]
    page = result.page.read_text(encoding="utf-8")
    assert "4 model–task pairs appear in several runs" not in page  # 2 pairs, each in 2 runs
    assert "2 model–task pairs appear in several runs" in page
    assert '"type":"errorbar"' in page and "whiskers ±1 standard deviation" in page
    assert data(result.page.parent, "run1/items/index")["n"] == 7


# --- real runs --------------------------------------------------------------------------------


def view_answer(request) -> str:
    """Answers of every shape, decided by the prompt: right, wrong and unreadable ones."""
    text = request.messages[-1].content
    pick = sum(map(ord, text)) % 6
    # one letter to a batch answers none of its sentences: "1. T 2. F" is a batch's partial answer
    return ["T", "F", "A", "答案：F", "I am not sure", "1. T 2. F"][pick]


ScriptedBackend.register("view-a", view_answer)
ScriptedBackend.register("view-b", lambda request: "T")


@pytest.fixture(scope="module")
def eval_run(tmp_path_factory) -> Path:
    """The example CPG table built without agents, evaluated by two scripted models."""
    work = tmp_path_factory.mktemp("view-eval")
    built = asyncio.run(
        run_build(
            "cpg",
            BuildOptions(
                source=EXAMPLE_TABLE, agents=False, run_dir=work / "build", use_cache=False
            ),
        )
    )
    options = EvalOptions(
        models=["scripted:view-a", "scripted:view-b"], run_dir=work / "eval", use_cache=False
    )
    asyncio.run(run_eval(built.dataset_path, options))
    return work / "eval"


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def expected_outcome(record: dict) -> str:
    if record["invalid"]:
        return "i"
    acc = record["scores"]["acc"]
    return "c" if acc >= 1 else "w" if acc <= 0 else "p"


@pytest.mark.slow
def test_an_eval_s_site_matches_its_run_files(eval_run):
    manifest = json.loads((eval_run / "manifest.json").read_text())
    dataset = jsonl(Path(manifest["dataset"]["path"]))
    index = data(eval_run, "run0/items/index")
    assert index["n"] == len(dataset) == sum(manifest["tasks"].values())
    rows = rows_of(eval_run, "run0/items")
    assert [r[0] for r in rows] == [item["id"] for item in dataset]
    at = {item["id"]: i for i, item in enumerate(dataset)}
    models = index["models"]
    scores = jsonl(eval_run / "scores.jsonl")
    assert len(scores) == 2 * len(dataset)
    for record in scores:
        flag = index["flags"][f"m{models.index(record['model'])}"][at[record["item_id"]]]
        assert flag == expected_outcome(record), record
    assert {expected_outcome(r) for r in scores} >= {"c", "w", "i", "p"}

    # a filter: view-b answers T to everything, so every SINGLE-F item is wrong for it
    wrong = matching(index, task="SINGLE-F", model=1, outcome="w")
    assert len(wrong) == manifest["tasks"]["SINGLE-F"] > 0
    assert all(rows[i][0].startswith("SINGLE-F/") for i in wrong)
    assert (
        len(matching(index, task="SINGLE-T", model=1, outcome="c")) == manifest["tasks"]["SINGLE-T"]
    )

    # the paper's table and the scores table hold summary.json's numbers
    summary = {
        (r["model"], r["task"]): r["score"]
        for r in json.loads((eval_run / "summary.json").read_text())
        if r["metric"] == "acc"
    }
    found = tables(eval_run / "report.html")
    layout = found["layout:CPG-EVAL Table 3 layout"]
    columns = ["SINGLE-T", "SINGLE-F", "BATCH-T", "BATCH-F", "SIM-GRA", "CAT-GRA"]
    columns += ["CON-INS-F10", "CON-INS-T5F5"]
    assert layout["rows"][0][0] == "RANDOM"
    for row in layout["rows"][1:]:
        model = row[0]
        for task, cell in zip(columns, row[1:9], strict=True):
            if (model, task) in summary:
                assert cell == pytest.approx(summary[model, task]), (model, task)
            else:
                assert cell == "—"
    assert {r[0] for r in layout["rows"][1:]} == set(models)

    # an item's detail: the prompt as the eval rendered it, each model's raw answer
    first = next(i for i, item in enumerate(dataset) if item["task"] == "SIM-GRA")
    detail = details_of(eval_run, "run0/items")[first]
    item = dataset[first]
    template = load_prompt(item["prompt"]["template"])
    assert detail["prompt"]["messages"] == [
        m.model_dump() for m in template.render(item["prompt"]["vars"])
    ]
    raw = {
        r["model"]: r["raw"]
        for r in jsonl(eval_run / "responses.jsonl")
        if r["item_id"] == item["id"]
    }
    assert [a["raw"] for a in detail["answers"]] == [raw[m] for m in models]
    assert detail["gold"] == item["answer"]


@pytest.fixture(scope="module")
def build_run(tmp_path_factory) -> Path:
    """The example CPG table built with scripted agents that reject and fail some outputs."""
    from .test_workflow import agent_script

    ScriptedBackend.register("agents", agent_script)
    work = tmp_path_factory.mktemp("view-build")
    options = BuildOptions(
        source=EXAMPLE_TABLE,
        agent_model="scripted:agents",
        run_dir=work / "build",
        use_cache=False,
    )
    return asyncio.run(run_build("cpg", options)).folder.path


@pytest.mark.slow
def test_a_build_s_site_has_its_stages_review_queue_and_rejected_outputs(build_run):
    folder = build_run
    manifest = BuildManifest.model_validate_json((folder / "manifest.json").read_text())
    assert (folder / "report.html").is_file()  # the build wrote its page
    assert data(folder, "run0/items/index")["n"] == len(jsonl(folder / "dataset.jsonl"))
    review = data(folder, "run0/review/index")
    assert review["n"] == manifest.review["rows"] > 0
    instances = jsonl(folder / "instances.jsonl")
    turned_down = [i for i in instances if i["origin"] == "agent" and i["status"] != "accepted"]
    rejected = data(folder, "run0/rejected/index")
    assert rejected["n"] == len(turned_down) > 0
    statuses = {f["name"]: f for f in rejected["facets"]}["status"]
    assert sorted(statuses["values"]) == ["failed", "rejected"]
    first = rows_of(folder, "run0/rejected")[0]
    assert first[0] == turned_down[0]["id"] and first[5].startswith("instance-backcheck: ")
    assert data(folder, "run0/failures/index")["n"] == len(jsonl(folder / "failures.jsonl"))
    stages = tables(folder / "report.html")["stages"]
    names = stages["header"][1:]
    for row in stages["rows"]:
        counts = manifest.stages[row[0]]
        assert {n: v for n, v in zip(names, row[1:], strict=True) if v != ""} == counts


@pytest.mark.slow
def test_judged_answers_show_each_dimension_and_agreement_is_plotted(in_tmp):
    from gramagents.judging.agreement import AgreementSettings
    from gramagents.judging.agreement_files import agree_run

    from .test_judge import evaluate, judged_dataset

    result = evaluate(judged_dataset(in_tmp / "dataset.jsonl"), in_tmp / "r")
    run = result.folder.path
    humans = in_tmp / "humans.csv"
    rows = [
        (f"EDU-TW-{k}", rater, 60 + 10 * k + d)
        for k in range(3)
        for rater, d in (("a", 0), ("b", 5))
    ]
    rows += [(f"EDU-QG-{k}", "a", 70 + 5 * k) for k in range(2)]
    humans.write_text(
        "item_id,rater,score\n" + "".join(f"{i},{r},{s}\n" for i, r, s in rows), encoding="utf-8"
    )
    agree_run(run, humans, settings=AgreementSettings(n_boot=0))
    write_view([run])
    details = details_of(run, "run0/items")
    judge = details[0]["answers"][0]["judge"]
    assert judge["rubric"] == "question-generation"
    assert judge["dimensions"] and set(judge["dimensions"]) == set(judge["points"])
    assert judge["dimensions"] == judge["points"]  # the scripted judge gives full marks
    assert judge["total"] == sum(judge["points"].values())
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "Judge against humans (n = 5" in page
    assert '"item_id":"EDU-TW-2"' in page  # the scatter's points are in its specification


# --- in a browser -----------------------------------------------------------------------------

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium():
    """Debian's Chromium, driven by Playwright (which never downloads a browser here)."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip(
            "Debian's chromium is not installed (apt-get install -y chromium); "
            "the viewer's browser test needs it"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


def open_page(chromium, page_path: Path):
    """A page with its console errors and uncaught exceptions collected in `page.problems`."""
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.goto(page_path.as_uri())
    page.problems = problems
    return page


@pytest.mark.slow
def test_the_eval_page_in_a_browser(eval_run, chromium, tmp_path):
    index = data(eval_run, "run0/items/index")
    task = {f["name"]: f for f in index["facets"]}["task"]
    page = open_page(chromium, eval_run / "report.html")
    page.wait_for_selector(".vega svg", timeout=20_000)  # the charts are drawn, offline
    assert page.locator(".vega svg").count() == page.locator(".vega").count() >= 3
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

    page.click('nav a[data-tab="items"]')
    page.wait_for_selector("table.rows tbody tr")
    count = page.locator(".count")
    assert count.inner_text() == f"{index['n']:,} of {index['n']:,} items"
    assert page.locator("table.rows tbody tr").count() == 50

    single_f = task["values"].index("SINGLE-F")
    page.select_option('select[data-filter="task"]', str(single_f))
    expected = task["rows"].count(single_f)
    page.wait_for_function(
        "n => document.querySelector('.count').textContent.startsWith(n + ' of')",
        arg=f"{expected:,}",
    )
    cells = page.locator("table.rows tbody tr td:nth-child(3)").all_inner_texts()
    assert cells and set(cells) == {"SINGLE-F"} and len(cells) == min(50, expected)

    page.select_option('select[data-filter="model"]', "1")  # view-b: T to everything
    page.select_option('select[data-filter="outcome"]', "c")
    page.wait_for_selector("text=No row matches these filters.")
    page.select_option('select[data-filter="outcome"]', "w")
    page.wait_for_function(
        "n => document.querySelector('.count').textContent.startsWith(n + ' of')",
        arg=f"{expected:,}",
    )

    page.locator("table.rows tbody tr").first.click()
    page.wait_for_selector(".detail .answer-card")
    detail = page.locator(".detail")
    first_id = page.locator("table.rows tbody tr td.id").first.inner_text()
    assert detail.locator("h3").inner_text() == first_id
    assert "prompt as sent" in detail.inner_text().lower()  # shown in capitals
    assert detail.locator(".answer-card").count() == 2
    page.screenshot(path=str(tmp_path / "items.png"))
    assert (tmp_path / "items.png").stat().st_size > 20_000
    assert page.problems == []
    page.close()


@pytest.mark.slow
def test_an_item_s_address_opens_it_in_a_browser(eval_run, chromium):
    from gramagents.report.view.markup import item_address

    rows = rows_of(eval_run, "run0/items")
    wanted = rows[-1][0]  # on the last page of the list
    page = open_page(chromium, eval_run / "report.html")
    page.goto((eval_run / "report.html").as_uri() + "#" + item_address(wanted).split("#", 1)[1])
    page.wait_for_selector(".detail h3.id")
    assert page.locator(".detail h3.id").inner_text() == wanted
    assert page.locator("table.rows tbody tr.selected td.id").inner_text() == wanted
    assert page.locator("#tab-items").is_visible()
    first = rows[0][0]
    page.evaluate("id => { location.hash = 'item=' + encodeURIComponent(id); }", first)
    page.wait_for_function(
        "id => document.querySelector('.detail h3.id').textContent === id", arg=first
    )
    page.evaluate("() => { location.hash = 'item=no-such-item'; }")
    page.wait_for_selector("text=No item no-such-item in this run.")
    assert page.problems == []
    page.close()


@pytest.mark.slow
def test_the_build_page_in_a_browser(build_run, chromium, tmp_path):
    page = open_page(chromium, build_run / "report.html")
    page.wait_for_selector(".vega svg", timeout=20_000)
    for tab in ("review", "rejected", "failures"):
        page.click(f'nav a[data-tab="{tab}"]')
        page.wait_for_selector(f"#tab-{tab} table.rows tbody tr")
    rejected = data(build_run, "run0/rejected/index")
    status = {f["name"]: f for f in rejected["facets"]}["status"]
    page.click('nav a[data-tab="rejected"]')
    code = status["values"].index("failed")
    page.select_option('#tab-rejected select[data-filter="status"]', str(code))
    failed = status["rows"].count(code)
    page.wait_for_function(
        "n => document.querySelector('#tab-rejected .count').textContent.startsWith(n + ' of')",
        arg=str(failed),
    )
    page.locator("#tab-rejected table.rows tbody tr").first.click()
    page.wait_for_selector("#tab-rejected .detail h3")
    assert "instance-backcheck failed" in page.locator("#tab-rejected .detail").inner_text()
    page.screenshot(path=str(tmp_path / "rejected.png"))
    assert page.problems == []
    page.close()


def test_a_minimal_pair_shows_both_sentences_and_their_log_probabilities(tmp_path):
    run = tmp_path / "pairs"
    run.mkdir()
    item = Item(
        id="BLIMP/agr/0",
        task="BLIMP",
        prompt=PromptParts(template="raw.md", vars={"good": "Dogs bark.", "bad": "Dogs barks."}),
        answer="good",
        meta={"UID": "agr"},
    )
    write_jsonl_atomic(run / "dataset.jsonl", [item])
    manifest = EvalManifest(
        run_id="pairs",
        kind="eval",
        command=[],
        models=["lm"],
        seed=1,
        tasks={"BLIMP": 1},
        dataset={"path": str(run / "dataset.jsonl"), "format": "gramagents"},
    )
    (run / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    logprobs = {"good": -9.5, "bad": -12.25, "good_tokens": 3, "bad_tokens": 4}
    answer = {**response("lm", item.id, None, task="BLIMP", extracted="good"), "logprobs": logprobs}
    (run / "responses.jsonl").write_text(lines([answer]), encoding="utf-8")
    graded = {**score("lm", item.id, "good", "good", task="BLIMP"), "meta": {"UID": "agr"}}
    (run / "scores.jsonl").write_text(lines([graded]), encoding="utf-8")
    write_view([run])
    detail = details_of(run, "run0/items")[0]
    assert detail["prompt"] == {"pair": {"context": "", "good": "Dogs bark.", "bad": "Dogs barks."}}
    assert detail["answers"][0]["logprobs"] == logprobs
    assert detail["answers"][0]["outcome"] == "c"
    assert [f["name"] for f in data(run, "run0/items/index")["facets"]][:2] == ["task", "category"]
    assert "UID" in [f["name"] for f in data(run, "run0/items/index")["facets"]]


def test_seeds_in_a_run_give_means_and_error_bars(tmp_path):
    from gramagents.report.summary import summarize
    from gramagents.report.view.eval_page import EvalRun, bars_of
    from gramagents.tasks.registry import TASKS, TaskSpec, task

    task(
        TaskSpec(
            name="VIEW-SEEDED", family="toy", extractor="tf", metric="acc", breakdowns=("seed",)
        )
    )
    try:
        run = tmp_path / "seeded"
        run.mkdir()
        right = {1: 3, 2: 2, 3: 1}  # of 4 items per seed
        records = [
            {
                **score(
                    "m", f"s{seed}-{k}", "T", "T" if k < right[seed] else "F", task="VIEW-SEEDED"
                ),
                "meta": {"seed": seed},
            }
            for seed in (1, 2, 3)
            for k in range(4)
        ]
        (run / "scores.jsonl").write_text(lines(records), encoding="utf-8")
        summary = summarize(run / "scores.jsonl")
        manifest = EvalManifest(
            run_id="seeded",
            kind="eval",
            command=[],
            models=["m"],
            seed=1,
            tasks={"VIEW-SEEDED": 12},
        )
        (bar,) = bars_of([EvalRun("run0", run, manifest, summary)])
        assert sorted(bar.values) == [0.25, 0.5, 0.75]
        (run / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
        write_view([run])
    finally:
        TASKS.unregister("VIEW-SEEDED")
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '"type":"errorbar"' in page and '"seeds":3' in page and '"sd":0.25' in page


def test_a_build_s_source_files_are_shown_as_its_report_counts_them(tmp_path):
    run = tmp_path / "build"
    run.mkdir()
    files = [
        {"file": "/data/Memory/a.jsonl", "read": 3, "parsed": 2, "refused": 1,
         "reasons": {"no options": 1}},
        {"file": "/data/Ethics/b.jsonl", "read": 4, "parsed": 4, "refused": 0, "reasons": {}},
    ]  # fmt: skip
    manifest = BuildManifest(
        run_id="b", kind="build", command=[], models=[], seed=1, status="complete",
        recipe="edu", source={"path": "/data", "files": files},
    )  # fmt: skip
    (run / "manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    write_view([run])
    found = tables(run / "report.html")["files"]
    assert found["header"] == ["file", "read", "parsed", "refused"]
    assert found["rows"] == [
        ["Memory/a.jsonl", 3, 2, 1],
        ["Ethics/b.jsonl", 4, 4, 0],
        ["total", 7, 6, 1],
    ]
    assert "no options" in (run / "report.html").read_text(encoding="utf-8")
