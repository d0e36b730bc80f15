import json

import pytest

from gramagents.errors import InputError
from gramagents.sources.datasets import read_dataset

GOOD = {"id": "a", "task": "SINGLE-T", "prompt": {"template": "raw.md", "vars": {"text": "x"}}}


def write(tmp_path, lines):
    path = tmp_path / "dataset.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_items_read_back_with_their_line_numbers(tmp_path):
    second = {**GOOD, "id": "b", "answer": "T", "meta": {"level": 2}}
    path = write(tmp_path, [json.dumps(GOOD), "", json.dumps(second, ensure_ascii=False)])
    dataset = read_dataset(path)
    assert [i.id for i in dataset.items] == ["a", "b"]
    assert dataset.lines == {"a": 1, "b": 3}
    assert dataset.items[1].meta == {"level": 2}


def test_items_share_the_strings_they_repeat(tmp_path):
    # Every item of a bank repeats its keys, task name, category and source path: read as one
    # object each, they are held once, not once per item.
    source = {"source": [{"path": "/data/grammar-table.jsonl", "line": 1}]}
    meta = {"category": "类别1", "provenance": source}
    lines = [json.dumps({**GOOD, "id": f"item-{n}", "meta": meta}) for n in range(2)]
    first, second = read_dataset(write(tmp_path, lines)).items
    assert first.meta == second.meta == meta
    assert first.meta["category"] is second.meta["category"]
    assert next(iter(first.meta)) is next(iter(second.meta))  # a dict key
    path = [m["provenance"]["source"][0]["path"] for m in (first.meta, second.meta)]
    assert path[0] is path[1]
    assert first.prompt.vars["text"] is second.prompt.vars["text"]


@pytest.mark.parametrize(
    ("lines", "where", "words"),
    [
        ([json.dumps(GOOD), '{"id": "b",'], ":2:", "invalid JSON"),
        ([json.dumps(GOOD), "[1, 2]"], ":2:", "JSON object"),
        ([json.dumps({"id": "a", "task": "SINGLE-T"})], ":1:", "field 'prompt'"),
        ([json.dumps({**GOOD, "prompt": {"template": 3}})], ":1:", "field 'prompt.template'"),
        (
            [json.dumps(GOOD), json.dumps({**GOOD, "answer": "F"})],
            ":2:",
            "duplicate id 'a' (first on line 1) with different content ('answer' differs)",
        ),
    ],
)
def test_a_bad_line_is_one_error_naming_file_line_and_field(tmp_path, lines, where, words):
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_dataset(path)
    message = str(info.value)
    assert f"dataset.jsonl{where}" in message and words in message
    assert "\n" not in message
