from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.recipes.cpg.table import read_grammar_table

from .conftest import EXAMPLE_CSV, EXAMPLE_TABLE


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_example_table_has_12_chinese_and_12_english_points_in_3_categories_each():
    points = read_grammar_table(EXAMPLE_TABLE)
    for language in ("zh", "en"):
        mine = [p for p in points if p.language == language]
        assert len(mine) >= 12
        assert len({p.category for p in mine}) >= 3
        assert all(len(p.examples) >= 3 for p in mine)


def test_csv_and_jsonl_describe_the_same_english_points():
    from_jsonl = {p.id: p for p in read_grammar_table(EXAMPLE_TABLE) if p.language == "en"}
    from_csv = {p.id: p for p in read_grammar_table(EXAMPLE_CSV)}
    assert from_csv.keys() == from_jsonl.keys()
    for point_id, point in from_csv.items():
        other = from_jsonl[point_id]
        assert (point.category, point.level, point.name, point.examples, point.confusers) == (
            other.category,
            other.level,
            other.name,
            other.examples,
            other.confusers,
        )


def test_yaml_table_with_bom_reads_like_jsonl(tmp_path):
    path = write(
        tmp_path / "t.yaml",
        "\ufeff"
        + """
points:
  - id: "1063"
    category: “是”字句
    level: 1
    name: 表示等同或类属
    examples: [我是学生。, 他是老师。]
    confusers: [他总是迟到。]
  - id: 1064
    category: “是”字句
    level: 1
    name: 表示说明或特征
    examples: [苹果是红的。]
""",
    )
    points = read_grammar_table(path)
    assert [p.id for p in points] == ["1063", "1064"]
    assert points[0].language == "zh"
    assert points[0].confusers == ["他总是迟到。"]
    assert points[0].label() == "“是”字句：表示等同或类属"
    assert points[1].source[0].line == 9


def test_jsonl_with_bom_and_csv_default_kind(tmp_path):
    jsonl = write(
        tmp_path / "t.jsonl",
        '\ufeff{"id": "a", "category": "c", "level": "A1", '
        '"name": "n", "examples": ["One.", "Two."]}\n',
    )
    assert read_grammar_table(jsonl)[0].level == "A1"
    csv_path = write(
        tmp_path / "t.csv",
        "id,category,level,name,sentence\n"
        "a,Modals,1,can,She can swim.\na,Modals,1,can,I can cook.\n",
    )
    point = read_grammar_table(csv_path)[0]
    assert point.examples == ["She can swim.", "I can cook."] and point.level == 1
    assert [s.line for s in point.source] == [2, 3]


@pytest.mark.parametrize(
    ("name", "text", "line", "field", "words"),
    [
        ("missing.csv", "id,category,level,name\na,b,1,c\n", 1, None, "missing column sentence"),
        (
            "dup.jsonl",
            '{"id":"1","category":"c","level":1,"name":"n","examples":["x"]}\n'
            '{"id":"2","category":"c","level":1,"name":"m","examples":["y"]}\n'
            '{"id":"1","category":"c","level":1,"name":"o","examples":["z"]}\n',
            3,
            "id",
            "duplicate id '1' (first on line 1)",
        ),
        (
            "clash.csv",
            "id,category,level,name,sentence\n1,c,1,n,x\n1,c,1,other,y\n",
            3,
            "name",
            "different name",
        ),
        (
            "dupsent.csv",
            "id,category,level,name,sentence,kind\n1,c,1,n,x,example\n1,c,1,n,x,confuser\n",
            3,
            "sentence",
            "duplicate sentence '1: x' (first on line 2) with different content ('kind' differs)",
        ),
        ("empty.jsonl", "\n  \n", 1, None, "empty"),
        ("empty.csv", "", 1, None, "empty"),
        (
            "badjson.jsonl",
            '{"id":"1","category":"c","level":1,"name":"n","examples":["x"]}\n{"id": "2", oops}\n',
            2,
            None,
            "invalid JSON",
        ),
        (
            "nofield.jsonl",
            '{"id":"1","category":"c","level":1,"examples":["x"]}\n',
            1,
            "name",
            "missing",
        ),
        (
            "unknown.jsonl",
            '{"id":"1","category":"c","level":1,"name":"n","examples":["x"],"exmaples":[]}\n',
            1,
            "exmaples",
            "unknown field",
        ),
        (
            "noex.jsonl",
            '{"id":"1","category":"c","level":1,"name":"n","examples":[]}\n',
            1,
            "examples",
            "at least one",
        ),
        (
            "badlevel.jsonl",
            '{"id":"1","category":"c","level":[1],"name":"n","examples":["x"]}\n',
            1,
            "level",
            "integer",
        ),
        (
            "kind.csv",
            "id,category,level,name,sentence,kind\n1,c,1,n,x,exmple\n",
            2,
            "kind",
            "'example' or 'confuser'",
        ),
        (
            "onlyconf.csv",
            "id,category,level,name,sentence,kind\n1,c,1,n,x,confuser\n",
            2,
            "kind",
            "no example rows",
        ),
    ],
)
def test_bad_tables_name_file_line_and_field(tmp_path, name, text, line, field, words):
    path = write(tmp_path / name, text)
    with pytest.raises(InputError) as caught:
        read_grammar_table(path)
    error = caught.value
    assert error.line == line
    assert error.field == field
    assert words in str(error)
    assert str(error).startswith(f"{path}:{line}: ")
    assert "\n" not in str(error)


def test_undecodable_bytes_name_their_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(
        "id,category,level,name,sentence\n".encode() + b"1,c,1,n,ok\n1,c,1,n,caf\xe9\n"
    )
    with pytest.raises(InputError) as caught:
        read_grammar_table(path)
    assert caught.value.line == 3
    assert "not valid UTF-8" in str(caught.value) and "0xe9" in str(caught.value)


def test_unknown_extension_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="unknown table format"):
        read_grammar_table(write(tmp_path / "t.txt", "x"))
    with pytest.raises(InputError, match="file not found"):
        read_grammar_table(tmp_path / "nope.jsonl")


def test_a_group_column_sets_the_group_apart_from_the_category(tmp_path):
    records = [
        '{"id": "1", "category": "介词(引出对象)", "level": 1, "name": "对", "group": "介词", '
        '"examples": ["他对我很好。"]}',
        '{"id": "2", "category": "陈述句", "level": 1, "name": "", "group": "", '
        '"examples": ["天气很好。"]}',
        '{"id": "3", "category": "程度副词", "level": 1, "name": "很", "examples": ["很好。"]}',
    ]
    points = read_grammar_table(write(tmp_path / "t.jsonl", "\n".join(records)))
    assert [p.group for p in points] == ["介词", "", None]  # named, none, its category
    assert [p.label() for p in points] == ["介词(引出对象)：对", "陈述句", "程度副词：很"]
    rows = "id,category,level,name,sentence,group\n1,介词(引出对象),1,对,他对我很好。,介词\n"
    rows += "2,陈述句,1,,天气很好。,\n"
    assert [p.group for p in read_grammar_table(write(tmp_path / "t.csv", rows))] == ["介词", ""]


def test_a_sentence_listed_twice_is_kept_once_with_a_note(tmp_path):
    record = (
        '{"id": "1", "category": "口语格式", "level": 5, "name": "X就X吧", '
        '"examples": ["改就改吧。"], "confusers": ["你吧，总是这样。", "他就在这儿。", '
        '"你吧，总是这样。"]}'
    )
    notes: list[str] = []
    [point] = read_grammar_table(write(tmp_path / "t.jsonl", record), notes=notes)
    assert point.confusers == ["你吧，总是这样。", "他就在这儿。"]
    assert notes == [f"{tmp_path / 't.jsonl'}:1: confusers: sentence '你吧，总是这样。' is "
                     "listed twice; kept once"]  # fmt: skip
