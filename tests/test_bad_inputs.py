"""The bad-input corpus: malformed files and settings for every reader and config, each given to
the command a user would run. Each must end in one line on stderr naming the file (and the line
and field where there is one), exit code 2, no traceback, and nothing written."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gramagents.cli import add_recipe_commands, app
from gramagents.records import EvalManifest

from .conftest import ROOT

UNREACHABLE = "openai:fake@http://127.0.0.1:9/v1"
GOOD_ITEM = {
    "id": "a1",
    "task": "SINGLE-T",
    "prompt": {"template": "raw.md", "vars": {"text": "T?"}},
    "answer": "T",
}
TABLE_HEADER = "id,category,level,name,description,sentence,kind\n"
TABLE_ROW = "E1,Modal verbs,A1,can,ability,She can swim.,example\n"
GEC_ITEM = {
    "id": "G01",
    "level": "A1",
    "name": "be after I",
    "notes": "I am",
    "pairs": [{"ungrammatical": "I is here.", "correction": "I am here.", "alternatives": []}],
}
BLIMP = {
    "sentence_good": "Tom bought these books.",
    "sentence_bad": "Tom bought these book.",
    "UID": "dna_1",
    "pairID": "0",
}
MC = {
    "subject": "历史",
    "ques_content": "秦朝统一六国的时间是（ ）。A．前221年 B．前206年 C．前202年 D．前230年",
    "ques_answer": "A",
}
RUBRIC = (ROOT / "rubrics" / "text-writing.md").read_text(encoding="utf-8")
MANIFEST = EvalManifest(run_id="r", command=[], models=[], seed=1).model_dump_json().encode()
DEEP = (
    b'{"id": "a1", "task": "SINGLE-T", "prompt": {"template": "raw.md"}, "meta": '
    + b"[" * 200_000
    + b"]" * 200_000
    + b"}\n"
)
TREE = "( (S (NP (PRP She)) (VP (MD can) (VP (VB swim))) (. .)) )\n"


def jsonl(*records: object) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def gbk(text: str) -> bytes:
    return text.encode("gbk")


@dataclass
class Case:
    """One malformed input: the files to write, the command, and what its one line must say."""

    id: str
    files: dict[str, bytes]
    args: list[str]
    says: list[str]
    """Substrings of the error line: the file and line (`name:3:`), the field, the problem."""
    extra: dict[str, bytes] = field(default_factory=dict)


def build(recipe: str, source: str, *more: str) -> list[str]:
    return ["build", recipe, "--source", source, "--agents", "off", "--run-dir", "out", *more]


def evaluate(dataset: str, *more: str, model: str = UNREACHABLE) -> list[str]:
    return ["eval", dataset, "--model", model, "--run-dir", "out", *more]


CASES = [
    # --- grammar-point tables (cpg) ---
    Case(
        "table-missing-column",
        {"t.csv": b"id,category,level,name\nE1,c,A1,n\n"},
        build("cpg", "t.csv"),
        ["t.csv:1:", "sentence"],
    ),
    Case(
        "table-extra-column",
        {"t.csv": (TABLE_HEADER + TABLE_ROW + TABLE_ROW.strip() + ",extra,more\n").encode()},
        build("cpg", "t.csv"),
        ["t.csv:3:"],
    ),
    Case(
        "table-wrong-delimiter",
        {"t.csv": (TABLE_HEADER + TABLE_ROW).replace(",", ";").encode()},
        build("cpg", "t.csv"),
        ["t.csv:1:"],
    ),
    Case(
        "table-gbk-bytes",
        {
            "t.csv": TABLE_HEADER.encode()
            + TABLE_ROW.encode()
            + gbk("E2,情态,A1,能,能力,我能游泳。,example\n")
        },
        build("cpg", "t.csv"),
        ["t.csv:3:", "UTF-8"],
    ),
    Case(
        "table-bom-mid-file",
        {
            "t.jsonl": b"\xef\xbb\xbf"
            + jsonl({"id": "1", "category": "c", "level": 1, "name": "n", "examples": ["x"]})
            + b"\xef\xbb\xbf"
            + jsonl({"id": "2", "category": "c", "level": 1, "name": "m", "examples": ["y"]})
        },
        build("cpg", "t.jsonl"),
        ["t.jsonl:2:"],
    ),
    Case(
        "table-duplicate-id",
        {
            "t.jsonl": jsonl(
                {"id": "1", "category": "c", "level": 1, "name": "n", "examples": ["x"]},
                {"id": "1", "category": "c", "level": 1, "name": "m", "examples": ["y"]},
            )
        },
        build("cpg", "t.jsonl"),
        ["t.jsonl:2:", "'id'"],
    ),
    Case("table-empty", {"t.jsonl": b""}, build("cpg", "t.jsonl"), ["t.jsonl:1:", "empty"]),
    Case(
        "table-binary",
        {"t.csv": bytes(range(256)) * 8},
        build("cpg", "t.csv"),
        ["t.csv:2:", "UTF-8"],
    ),
    Case(
        "table-10mb-line",
        {"t.jsonl": b'{"id": "1", "name": "' + b"x" * 10_000_000 + b"\n"},
        build("cpg", "t.jsonl"),
        ["t.jsonl:1:"],
    ),
    Case(
        "table-invalid-json-middle",
        {
            "t.jsonl": jsonl(
                {"id": "1", "category": "c", "level": 1, "name": "n", "examples": ["x"]}
            )
            + b'{"id": "2", "category": "c",\n'
            + jsonl({"id": "3", "category": "c", "level": 1, "name": "m", "examples": ["y"]})
        },
        build("cpg", "t.jsonl"),
        ["t.jsonl:2:"],
    ),
    # --- GEC grammar-item lists ---
    Case(
        "gec-missing-field",
        {"g.jsonl": jsonl({k: v for k, v in GEC_ITEM.items() if k != "name"})},
        build("gec", "g.jsonl"),
        ["g.jsonl:1:", "name"],
    ),
    Case(
        "gec-pair-not-minimal",
        {
            "g.jsonl": jsonl(
                {
                    **GEC_ITEM,
                    "pairs": [
                        {
                            "ungrammatical": "I am here.",
                            "correction": "I am here.",
                            "alternatives": [],
                        }
                    ],
                }
            )
        },
        build("gec", "g.jsonl"),
        ["g.jsonl:1:", "pairs"],
    ),
    Case(
        "gec-gbk-bytes",
        {"g.jsonl": gbk(json.dumps({**GEC_ITEM, "notes": "主语"}, ensure_ascii=False) + "\n")},
        build("gec", "g.jsonl"),
        ["g.jsonl:1:", "UTF-8"],
    ),
    # --- datasets (eval) ---
    Case(
        "dataset-invalid-json-middle",
        {"d.jsonl": jsonl(GOOD_ITEM) + b"{not json}\n" + jsonl({**GOOD_ITEM, "id": "a3"})},
        evaluate("d.jsonl"),
        ["d.jsonl:2:"],
    ),
    Case(
        "dataset-unknown-task",
        {"d.jsonl": jsonl({**GOOD_ITEM, "task": "NO-SUCH-TASK"})},
        evaluate("d.jsonl"),
        ["d.jsonl:1:", "task"],
    ),
    Case(
        "dataset-duplicate-id",
        {"d.jsonl": jsonl(GOOD_ITEM, {**GOOD_ITEM, "answer": "F"})},
        evaluate("d.jsonl"),
        ["d.jsonl:2:", "id"],
    ),
    Case(
        "dataset-missing-prompt",
        {"d.jsonl": jsonl({k: v for k, v in GOOD_ITEM.items() if k != "prompt"})},
        evaluate("d.jsonl"),
        ["d.jsonl:1:", "prompt"],
    ),
    Case("dataset-empty", {"d.jsonl": b"\n\n"}, evaluate("d.jsonl"), ["d.jsonl"]),
    Case(
        "dataset-binary",
        {"d.jsonl": b"\x00\x01\x02PK\x03\x04" * 100},
        evaluate("d.jsonl"),
        ["d.jsonl:1:"],
    ),
    Case(
        "dataset-template-absolute-path",
        {
            "d.jsonl": jsonl(
                GOOD_ITEM, {**GOOD_ITEM, "id": "a2", "prompt": {"template": "/etc/hostname"}}
            )
        },
        evaluate("d.jsonl"),
        ["d.jsonl:2:", "field 'prompt.template'", "outside"],
    ),
    Case(
        "dataset-template-parent-path",
        {
            "d.jsonl": jsonl({**GOOD_ITEM, "prompt": {"template": "../../secret.env"}}),
            "secret.env": b"OPENAI_API_KEY=sk-never-sent\n",
        },  # fmt: skip
        evaluate("d.jsonl"),
        ["d.jsonl:1:", "field 'prompt.template'", "'..'"],
    ),
    Case(
        "dataset-nested-200000-deep",
        {"d.jsonl": DEEP},
        evaluate("d.jsonl"),
        ["d.jsonl:1:", "nested more than 200 levels"],
    ),
    Case(
        "dataset-lone-surrogate",
        {
            "d.jsonl": jsonl(GOOD_ITEM)
            + b'{"id": "a2", "task": "SINGLE-T", "prompt": {"template": "raw.md", '
            b'"vars": {"text": "x\\ud800y"}}}\n'
        },  # fmt: skip
        evaluate("d.jsonl"),
        ["d.jsonl:2:", "field 'prompt.vars.text'", "unpaired surrogate"],
    ),
    Case(
        "items-yaml-nested-5000-deep",
        {"i.yaml": b"- id: G01\n  level: A1\n  notes: " + b"[" * 5000 + b"]" * 5000 + b"\n"},
        build("gec", "i.yaml"),
        ["i.yaml", "nested more than 200 levels"],
    ),
    Case(
        "items-yaml-lone-surrogate",
        {"i.yaml": b'- id: G01\n  level: A1\n  name: "be \\ud800"\n'},
        build("gec", "i.yaml"),
        ["i.yaml:3:", "name", "unpaired surrogate"],
    ),
    # --- EduEval exam JSONL ---
    Case(
        "exam-invalid-json-middle",
        {"src/1_memory/history.jsonl": jsonl(MC) + b'{"subject": "\n' + jsonl(MC)},
        build("edu", "src"),
        ["history.jsonl:2:"],
    ),
    # --- minimal-pair files ---
    Case(
        "blimp-missing-field",
        {"p.jsonl": jsonl({k: v for k, v in BLIMP.items() if k != "sentence_bad"})},
        evaluate("p.jsonl", "--format", "blimp"),
        ["p.jsonl:1:", "sentence_bad"],
    ),
    Case(
        "blimp-binary",
        {"p.jsonl": b"\xff\xfe\x00\x00" * 64},
        evaluate("p.jsonl", "--format", "blimp"),
        ["p.jsonl:1:"],
    ),
    Case(
        "climp-unpaired-row",
        {"c.csv": "我买了一本书。\n我买了一条书。\n桌子上有三只猫。\n".encode()},
        evaluate("c.csv", "--format", "climp"),
        ["c.csv:3:"],
    ),
    Case(
        "climp-both-grammatical",
        {"c.csv": "sentence,label\n我买了一本书。,1\n我买了一条书。,1\n".encode()},
        evaluate("c.csv", "--format", "climp"),
        ["c.csv:", "label"],
    ),
    Case(
        "climp-gbk-bytes",
        {"c.csv": gbk("sentence,label\n我买了一本书。,1\n我买了一条书。,0\n")},
        evaluate("c.csv", "--format", "climp"),
        ["c.csv:", "UTF-8"],
    ),
    # --- released CPG-EVAL banks ---
    Case(
        "cpg-eval-missing-column",
        {"1-1-SINGLE-T.csv": "\ufeffid,prompt\n1,请判断\n".encode()},
        evaluate("1-1-SINGLE-T.csv", "--format", "cpg-eval"),
        ["1-1-SINGLE-T.csv:1:", "question"],
    ),
    # --- M2 files ---
    Case(
        "m2-bad-edit",
        {
            "h.m2": b"S I is here .\nA 1 2|||R:VERB\n\n",
            "r.m2": b"S I is here .\nA 1 2|||R:VERB|||am|||REQUIRED|||-NONE-|||0\n\n",
        },
        ["m2", "--hyp", "h.m2", "--ref", "r.m2"],
        ["h.m2:2:", "field 'A'", "not 6"],
    ),
    Case(
        "m2-edit-outside-sentence",
        {
            "h.m2": b"S I is here .\nA 7 9|||R:VERB|||am|||REQUIRED|||-NONE-|||0\n\n",
            "r.m2": b"S I is here .\nA 1 2|||R:VERB|||am|||REQUIRED|||-NONE-|||0\n\n",
        },
        ["m2", "--hyp", "h.m2", "--ref", "r.m2"],
        ["h.m2:2:", "field 'span'"],
    ),
    Case(
        "m2-text-between-blocks",
        {
            "h.m2": b"S I is here .\nA 1 2|||R:VERB|||am|||REQUIRED|||-NONE-|||0\n"
            b"this line is stray\n\n",
            "r.m2": b"S I is here .\n\n",
        },
        ["m2", "--hyp", "h.m2", "--ref", "r.m2"],
        ["h.m2:3:"],
    ),
    # --- recipes ---
    Case(
        "recipe-unknown-nested-key",
        {
            "r.yaml": (ROOT / "graphs" / "gec.yaml")
            .read_bytes()
            .replace(b"per_item: 3", b"per_itme: 3")
        },
        [
            "build",
            "r.yaml",
            "--source",
            str(ROOT / "examples" / "gec" / "grammar-items.jsonl"),
            "--run-dir",
            "out",
        ],
        ["r.yaml:", "per_itme"],
    ),
    Case(
        "recipe-bad-yaml",
        {"r.yaml": b"recipe: gec\nnodes:\n  - name: [unclosed\n"},
        ["build", "r.yaml", "--source", "x.jsonl", "--run-dir", "out"],
        ["r.yaml:"],
    ),
    # --- rubrics ---
    Case(
        "rubric-overlapping-dimensions",
        {"r.md": RUBRIC.replace("name: Content Quality", "name: Language Accuracy", 1).encode()},
        ["rubric", "check", "r.md"],
        ["r.md:13:", "field 'name'", "duplicate"],
    ),
    Case(
        "rubric-points-over-scale",
        {"r.md": RUBRIC.replace("points: 20", "points: 45", 1).encode()},
        ["rubric", "check", "r.md"],
        ["r.md:"],
    ),
    # --- human-score files ---
    Case(
        "human-wrong-delimiter",
        {"h.csv": b"item_id;rater;score\nitem-1;a;80\n"},
        ["agree", "run", "--human", "h.csv"],
        ["h.csv:1:"],
    ),
    Case(
        "human-duplicate-rating",
        {"h.csv": b"item_id,rater,score\nitem-1,a,80\nitem-1,a,70\n"},
        ["agree", "run", "--human", "h.csv"],
        ["h.csv:3:"],
    ),
    # --- model specs and servers ---
    Case(
        "spec-unknown-backend",
        {"d.jsonl": jsonl(GOOD_ITEM)},
        evaluate("d.jsonl", model="nosuch:model"),
        ["nosuch:model"],
    ),
    Case(
        "spec-bad-option",
        {"d.jsonl": jsonl(GOOD_ITEM)},
        evaluate("d.jsonl", model="openai:m@http://127.0.0.1:9/v1?timeout=soon"),
        ["timeout"],
    ),
    Case(
        "spec-unreachable-base-url",
        {"d.jsonl": jsonl(GOOD_ITEM)},
        evaluate("d.jsonl"),
        ["127.0.0.1:9"],
    ),
    Case(
        "spec-secret-option-not-echoed",
        {"d.jsonl": jsonl(GOOD_ITEM)},
        evaluate("d.jsonl", model="openai:m@http://127.0.0.1:9/v1?api_key=sk-planted-0123456789"),
        ["api_key", "***"],
    ),
    Case(
        "spec-password-in-url-not-echoed",
        {"d.jsonl": jsonl(GOOD_ITEM)},
        evaluate("d.jsonl", model="openai:m@http://user:PASSWORD@127.0.0.1:9/v1"),
        ["http://***@127.0.0.1:9"],
    ),
    Case(
        "view-out-foreign-folder",
        {"mine/notes.txt": b"my own notes\n", "run/manifest.json": MANIFEST},
        ["view", "run", "--out", "mine"],
        ["--out mine: holds files", "--force"],
    ),
    # --- treebanks ---
    Case(
        "treebank-unbalanced",
        {"tb/a.mrg": (TREE + "( (S (NP (PRP He)) (VP (VBZ runs))\n").encode()},
        build("syntax-qa", "tb"),
        ["a.mrg:2:"],
    ),
    Case(
        "treebank-binary",
        {"tb/a.mrg": b"\x00\x9f\x92\x96" * 100},
        build("syntax-qa", "tb"),
        ["a.mrg:1:"],
    ),
    # --- grammar books ---
    Case(
        "book-corrupt-pdf",
        {"b.pdf": b"%PDF-1.7\n" + b"\x00garbage" * 200},
        build("grammar-book", "b.pdf"),
        ["b.pdf"],
    ),
    Case("book-empty-text", {"b.md": b"\n\n   \n"}, build("grammar-book", "b.md"), ["b.md:1:"]),
]


def human_run(folder: Path) -> None:
    """A run folder with judge scores (what `gramagents agree` reads)."""
    folder.mkdir()
    record = {
        "model": "m1",
        "item_id": "item-1",
        "task": "EDU-TW",
        "score": 0.8,
        "judge": {"total": 80.0, "rubric": "text-writing", "rubric_hash": "ab" * 32},
        "meta": {"answer_chars": 300},
    }
    (folder / "scores.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")


def snapshot(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_malformed_input_is_one_line_exit_2_and_nothing_written(case, tmp_path, monkeypatch):
    work = tmp_path / "work"
    for name, data in case.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    if "agree" in case.args:
        human_run(work / "run")
    monkeypatch.chdir(work)
    before = snapshot(work)
    add_recipe_commands()
    result = CliRunner().invoke(app, case.args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert len(lines[0]) < 600  # a 10 MB line is not echoed
    for word in case.says:
        assert word in lines[0], lines[0]
    assert "PASSWORD" not in result.output and "planted" not in result.output
    assert "Traceback" not in result.output
    assert snapshot(work) == before  # no run folder, no partial output
