"""Nothing in a dataset, a spec or a run reads, writes or leaks outside its place.

Tried as a hostile dataset author and a careless user would: resource names that lead out of
the resource folders, ids that would be file names elsewhere, credentials in specs, markup in
data that would break `report.md` or the viewer, and `gramagents view` pointed at folders and
asked for files it should not give.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from gramagents import resources
from gramagents.cli import app
from gramagents.errors import GramagentsError, InputError, SpecError
from gramagents.models import create_backend
from gramagents.models.spec import parse_spec
from gramagents.recipes.grammar_book.report import translation_stem
from gramagents.redact import redact
from gramagents.report.mdtext import code_span, md_text
from gramagents.report.runs import refresh_report
from gramagents.report.view import write_view
from gramagents.report.view.markup import inline_images, inline_json, markdown
from gramagents.report.view.serve import make_server
from gramagents.runtime.paths import inside, safe_name
from gramagents.templates import load_prompt

from .conftest import ROOT
from .test_view import chromium, hand_run, lines, open_page  # noqa: F401 - fixtures

HOSTILE_IDS = [
    "../../../elsewhere/x",
    "/tmp/abs/x",
    "..",
    ".hidden",
    "a/b\\c:d*e?f",
    "CON",
    "nul.txt",
    "x" * 300,
    "雪" * 120,
    "A",
    "a",
    "tab\there\nnewline",
]

# --- resources named by data ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["/etc/hostname", "../../.env", "cpg/../../x.md", "a\\..\\b.md", "C:/x.md", ""]
)
def test_a_resource_name_that_leads_out_of_its_folders_is_refused(name, in_tmp):
    with pytest.raises(resources.ResourceRefused):
        resources.find("prompts", name)


def test_a_symlink_out_of_a_prompt_folder_is_not_followed(in_tmp):
    secret = in_tmp / "secret.env"
    secret.write_text("OPENAI_API_KEY=sk-do-not-read\n", encoding="utf-8")
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "link.md").symlink_to(secret)
    with pytest.raises(resources.ResourceRefused, match="links to a file outside"):
        load_prompt("link.md")


def test_resources_inside_the_folders_still_resolve_by_name_and_full_path(in_tmp):
    packaged = resources.find("prompts", "raw.md")
    assert resources.find("prompts", str(packaged.resolve())) == packaged
    assert resources.find("prompts", "prompts/raw.md") == packaged  # the folder's own name


def test_a_template_s_base_outside_the_folders_names_its_file_and_field(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "ask.md").write_text("---\nbase: ../../x.md\n---\nIs {{ s }} so?\n")
    with pytest.raises(InputError) as caught:
        load_prompt("ask.md")
    assert (caught.value.line, caught.value.field) == (2, "base")


def test_an_item_s_rubric_outside_the_rubric_folders_is_refused(tmp_path):
    from gramagents.sources.datasets import read_items
    from gramagents.workflow.selection import select_items

    path = tmp_path / "d.jsonl"
    item = {"id": "e", "task": "EDU-TW", "prompt": {"template": "edu/open.md"}}
    path.write_text(json.dumps({**item, "meta": {"rubric": "/etc/passwd"}}) + "\n")
    with pytest.raises(InputError) as caught:
        select_items(read_items(path), None)
    assert (caught.value.line, caught.value.field) == (1, "meta.rubric")


# --- file names made from data ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=400), min_size=1, max_size=20))
def test_safe_names_stay_in_their_folder_and_never_meet(texts):
    taken: set[str] = set()
    made = [safe_name(text, taken) for text in texts]
    for name in made:
        assert name and name not in (".", "..") and not name.startswith(".")
        assert "/" not in name and "\\" not in name and "\x00" not in name
        assert len(name.encode("utf-8")) <= 100
        assert Path(name).name == name
    assert len({n.casefold() for n in made}) == len(made)


def test_different_ids_that_clean_alike_get_different_names():
    assert safe_name("a/b") != safe_name("a_b") == "a_b"
    assert safe_name("G01") == "G01"  # a plain id is kept as it is
    assert safe_name("CON").casefold() != "con"


def test_translation_files_of_any_model_label_and_direction_stay_in_their_folder():
    taken: set[str] = set()
    stems = [
        translation_stem(model, direction, taken)
        for model in ("openai:m@http://h/v1", "../../../x", "smollm2?temperature=0.8&seed=1")
        for direction in ("into", "../up", "/abs")
    ]
    assert len(set(stems)) == len(stems)
    assert all("/" not in s and not s.startswith(".") for s in stems)


@pytest.mark.slow
def test_a_gec_build_writes_every_item_s_m2_file_inside_the_run(tmp_path, monkeypatch):
    pair = {"ungrammatical": "He go home.", "correction": "He goes home.", "alternatives": []}
    items = [
        {"id": key, "level": "A1", "name": f"point {n}", "notes": "", "pairs": [pair]}
        for n, key in enumerate(HOSTILE_IDS)
    ]
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = CliRunner().invoke(
        app, ["build", "gec", "--source", str(source), "--agents", "off", "--run-dir", "run"]
    )
    assert result.exit_code == 0, result.output
    outside = [
        p
        for p in tmp_path.rglob("*")
        if work not in p.parents
        and p not in (work, source)
        and not p.name.startswith("cache.sqlite")  # the test's response cache
    ]
    assert outside == []  # nothing written next to the source or above the run
    index = json.loads((work / "run" / "m2" / "index.json").read_text(encoding="utf-8"))
    assert [entry["item"] for entry in index] == HOSTILE_IDS
    files = {entry["file"] for entry in index}
    assert len(files) == len(HOSTILE_IDS)
    assert {p.name for p in (work / "run" / "m2").iterdir()} == files | {"index.json"}


def test_hostile_item_ids_and_model_labels_name_no_file_of_an_eval(tmp_path):
    import asyncio

    from gramagents.models.scripted import ScriptedBackend
    from gramagents.workflow.eval import EvalOptions, run_eval

    ScriptedBackend.register("../../../up", lambda request: "T")
    items = [
        {"id": key, "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {"text": "?"}},
         "answer": "T", "meta": {"category": key, "source": f"{key}:1"}}
        for key in HOSTILE_IDS
    ]  # fmt: skip
    dataset = tmp_path / "data" / "d.jsonl"
    dataset.parent.mkdir()
    dataset.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), "utf-8")
    run = tmp_path / "work" / "run"
    options = EvalOptions(models=["scripted:../../../up"], run_dir=run, limit=3, seed=2)
    assert asyncio.run(run_eval(dataset, options)).manifest.status == "complete"
    written = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*") if p.is_file()}
    assert written <= {"data", "work", "cache.sqlite", "cache.sqlite-wal", "cache.sqlite-shm"}
    assert {p.name for p in run.iterdir()} == {
        "manifest.json", "responses.jsonl", "scores.jsonl", "summary.json", "report.md",
        "report.html", "view", ".lock",
    }  # fmt: skip


# --- credentials ---------------------------------------------------------------------------------


def test_a_spec_s_label_masks_userinfo_and_key_like_options():
    spec = parse_spec("openai:m@http://user:PASSWORD@host:8000/v1?api_key_env=MY_KEY&timeout=5")
    # the label leaves the endpoint and transport options out; the endpoint is masked
    assert spec.label == "openai:m"
    assert spec.endpoint == "http://***@host:8000/v1"
    assert parse_spec("openai:m?api_key=s3cret&temperature=0.5").label == (
        "openai:m?api_key=***&temperature=0.5"
    )
    assert spec.base_url == "http://user:PASSWORD@host:8000/v1"  # the backend still gets it
    assert (
        redact("x?token=abc&header_Authorization=Bearer+zz")
        == "x?token=***&header_Authorization=***"
    )


def test_an_unknown_secret_option_is_refused_without_echoing_it():
    with pytest.raises(SpecError) as caught:
        create_backend("openai:m@http://127.0.0.1:9/v1?api_key=sk-planted-0123456789abcdef")
    assert "api_key" in str(caught.value) and "planted" not in str(caught.value)


# --- report.md and the viewer ---------------------------------------------------------------------

MARKUP = [
    "a|b",
    "line\n# heading",
    "[click](javascript:alert(1))",
    "![x](/etc/passwd.png)",
    "<!--<script>",
    "</script><script>window.pwned=1</script>",
    "*bold* _it_ `code`",
    "1. list",
    "&amp; entity",
]


def _text_of(html: str) -> str:
    from html.parser import HTMLParser

    parts: list[str] = []
    parser = HTMLParser()
    parser.handle_data = parts.append  # type: ignore[method-assign]
    parser.feed(html)
    return "".join(parts)


@pytest.mark.parametrize("text", MARKUP)
def test_data_in_markdown_shows_as_its_own_text(text):
    flat = " ".join(text.splitlines())
    rendered = MarkdownIt("commonmark").enable("table").render(md_text(text))
    assert _text_of(rendered).strip() == flat
    assert "<a " not in rendered and "<img" not in rendered and "<h1" not in rendered
    cell = MarkdownIt("commonmark").enable("table").render(f"| h |\n|---|\n| {md_text(text)} |")
    assert cell.count("<td>") == 1
    code = MarkdownIt("commonmark").render(code_span(text))
    assert _text_of(code).strip() == flat.strip()


@pytest.fixture
def marked_run(hand_run):  # noqa: F811 - the fixture of test_view
    """The hand-written eval run, its categories and one model's name full of markup."""
    items = [json.loads(x) for x in (hand_run / "dataset.jsonl").read_text().splitlines()]
    category = {item["id"]: MARKUP[n] for n, item in enumerate(items)}
    for item in items:
        item["meta"]["category"] = category[item["id"]]
    (hand_run / "dataset.jsonl").write_text(lines(items), encoding="utf-8")
    rows = [json.loads(x) for x in (hand_run / "scores.jsonl").read_text().splitlines()[:-1]]
    for row in rows:
        row["meta"]["category"] = category.get(row["item_id"], MARKUP[-1])
    (hand_run / "scores.jsonl").write_text(lines(rows), encoding="utf-8")
    return hand_run


def test_markup_in_data_keeps_report_md_s_tables_whole(marked_run):
    path, _, _ = refresh_report(marked_run)
    text = path.read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<a " not in rendered and "<img" not in rendered
    assert "<h1>heading" not in rendered and "# heading" in _text_of(rendered)
    table = text.split("## Scores by category", 1)[1].split("\n\n", 2)[1].splitlines()
    widths = {
        len(MarkdownIt().enable("table").parse(f"{table[0]}\n{table[1]}\n{row}"))
        for row in table[2:]
    }
    assert len(widths) == 1  # every row has as many cells as the header
    for value in ("a|b", "![x](/etc/passwd.png)", "&amp; entity"):  # the scored items' own
        assert value in _text_of(rendered)


def test_the_page_s_inline_json_cannot_end_its_script(marked_run):
    write_view([marked_run])
    page = (marked_run / "report.html").read_text(encoding="utf-8")
    config = page.split('<script id="gv-config" type="application/json">', 1)[1]
    config = config.split("</script>", 1)[0]
    assert "<" not in config and ">" not in config and "&" not in config
    assert inline_json({"x": "<!--<script>&"}) == '{"x":"\\u003c!--\\u003cscript\\u003e\\u0026"}'
    assert json.loads(inline_json({"x": "</script>"})) == {"x": "</script>"}


def test_a_section_makes_no_links_and_inlines_no_image_outside_its_folder(tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG secret")
    folder = tmp_path / "run"
    folder.mkdir()
    html = markdown(["[x](https://example.org)", f"![a]({secret})", "![b](../secret.png)"])
    assert "<a " not in html
    shown = inline_images(html, folder)
    assert "base64" not in shown and "secret" not in shown.replace(">a<", "").replace(">b<", "")
    assert inside(folder, "../secret.png") is None and inside(folder, str(secret)) is None
    assert inside(folder, "plot/x.svg") == folder / "plot" / "x.svg"


# --- gramagents view --out and --serve ------------------------------------------------------------


def test_view_out_refuses_a_folder_it_did_not_write(hand_run, tmp_path):  # noqa: F811
    foreign = tmp_path / "mine"
    (foreign / "view").mkdir(parents=True)
    (foreign / "report.html").write_text("my own page", encoding="utf-8")
    (foreign / "view" / "notes.txt").write_text("keep me", encoding="utf-8")
    runner = CliRunner()
    refused = runner.invoke(app, ["view", str(hand_run), "--out", str(foreign)])
    assert refused.exit_code == 2
    [line] = refused.output.strip().splitlines()
    assert line.startswith(f"error: --out {foreign}: holds files") and "--force" in line
    assert (foreign / "report.html").read_text() == "my own page"
    assert (foreign / "view" / "notes.txt").is_file()
    site = tmp_path / "site"
    assert runner.invoke(app, ["view", str(hand_run), "--out", str(site)]).exit_code == 0
    assert runner.invoke(app, ["view", str(hand_run), "--out", str(site)]).exit_code == 0
    forced = runner.invoke(app, ["view", str(hand_run), "--out", str(foreign), "--force"])
    assert forced.exit_code == 0 and "my own page" not in (foreign / "report.html").read_text()


def _get(port: int, path: str, host: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Host": host} if host is not None else {}
    connection.request("GET", path, headers=headers)
    reply = connection.getresponse()
    body = reply.read()
    connection.close()
    return reply.status, body


def test_serve_gives_the_site_only(hand_run, tmp_path):  # noqa: F811
    write_view([hand_run])
    outside = tmp_path / "outside.txt"
    outside.write_text("not for the browser", encoding="utf-8")
    os.symlink(outside, hand_run / "view" / "leak.txt")
    server = make_server(hand_run)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        assert _get(port, "/report.html")[0] == 200
        assert _get(port, "/view/app.js")[0] == 200
        assert _get(port, "/")[0] == 302
        refused = ["/view/", "/view/data/", "/manifest.json", "/responses.jsonl",
                   "/view/leak.txt", "/view/../manifest.json", "/%2e%2e/outside.txt"]  # fmt: skip
        for path in refused:
            status, body = _get(port, path)
            assert status == 404 and b"not for the browser" not in body, path
        assert _get(port, "/report.html", host="evil.example:80")[0] == 421
        assert _get(port, "/report.html", host=f"localhost:{port}")[0] == 200
    finally:
        server.shutdown()
        server.server_close()


# --- the page in a browser ------------------------------------------------------------------------


@pytest.mark.slow
def test_markup_in_data_leaves_the_page_whole_in_a_browser(marked_run, chromium):  # noqa: F811
    write_view([marked_run])
    page = open_page(chromium, marked_run / "report.html")
    page.wait_for_selector(".vega svg", timeout=20_000)  # the charts are drawn
    assert page.locator(".vega svg").count() == page.locator(".vega").count() >= 1
    page.click('nav a[data-tab="items"]')
    page.wait_for_selector("table.rows tbody tr")
    assert page.locator("table.rows tbody tr").count() == 7  # every row, none swallowed
    options = page.locator("select[data-filter='category'] option").all_inner_texts()
    assert {"<!--<script> (1)", "a|b (1)", f"{MARKUP[5]} (1)"} <= set(options), options
    assert page.evaluate("window.pwned") is None
    assert page.problems == []
    page.close()


def test_rubric_check_still_reads_a_file_the_user_names(tmp_path):
    copy = tmp_path / "mine.md"
    copy.write_text((ROOT / "rubrics" / "text-writing.md").read_text("utf-8"), "utf-8")
    result = CliRunner().invoke(app, ["rubric", "check", str(copy)])
    assert result.exit_code == 0 and result.output.strip().endswith("ok")


def test_only_the_project_s_errors_come_out_of_a_refused_resource(in_tmp):
    with pytest.raises(GramagentsError):
        load_prompt("../x.md")
