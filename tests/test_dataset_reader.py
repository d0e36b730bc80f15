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


@pytest.mark.parametrize(
    ("lines", "where", "words"),
    [
        ([json.dumps(GOOD), '{"id": "b",'], ":2:", "invalid JSON"),
        ([json.dumps(GOOD), "[1, 2]"], ":2:", "JSON object"),
        ([json.dumps({"id": "a", "task": "SINGLE-T"})], ":1:", "field 'prompt'"),
        ([json.dumps(GOOD), json.dumps(GOOD)], ":2:", "duplicate id 'a' (first on line 1)"),
    ],
)
def test_a_bad_line_is_one_error_naming_file_line_and_field(tmp_path, lines, where, words):
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_dataset(path)
    message = str(info.value)
    assert f"dataset.jsonl{where}" in message and words in message
    assert "\n" not in message
