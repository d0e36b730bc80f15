"""CLiMP files in the layouts they come in: the released corpus's unnamed columns (`,0,1,2,3`)
and bare sentences, and named columns; with BOMs, CRLF line ends, quoted sentences with commas
and blank lines. Every file here is written for the project."""

import subprocess
import sys
from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.recipes.pairs.climp import LAYOUTS
from gramagents.sources.datasets import read_dataset

BOM = "\ufeff"

# The released layout: a pandas dump, row index then phenomenon, paradigm, sentence, label.
# One pair is written ungrammatical first, one has a sentence with an ASCII comma (quoted).
UNNAMED = "\n".join(
    [
        ",0,1,2,3",
        "0,anaphor_agreement,anaphor_agreement_gender,王丽娜批评了她自己,1",
        "1,anaphor_agreement,anaphor_agreement_gender,王丽娜批评了它自己,0",
        "2,anaphor_agreement,anaphor_agreement_gender,陈建国照顾过它自己,0",
        "3,anaphor_agreement,anaphor_agreement_gender,陈建国照顾过他自己,1",
        '4,anaphor_agreement,anaphor_agreement_gender,"张伟受伤以后,一直在责怪他自己",1',
        '5,anaphor_agreement,anaphor_agreement_gender,"张伟受伤以后,一直在责怪它自己",0',
        "",
    ]
)
# The same layout with a BOM, CRLF line ends and an empty line at the end.
UNNAMED_CRLF = BOM + "\r\n".join(
    [
        ",0,1,2,3",
        "0,classifier,classifier,刘洋买了一本杂志,1",
        "1,classifier,classifier,刘洋买了一匹杂志,0",
        "2,classifier,classifier,院子里停着两辆自行车,1",
        "3,classifier,classifier,院子里停着两张自行车,0",
        "",
        "",
    ]
)
# Bare sentences as released (ba_construction_1000.csv): CRLF, no newline at the end.
SENTENCES_CRLF = "\r\n".join(
    [
        "李明把作业写完了",
        "李明被作业写完了",
        "妈妈把衣服洗干净了",
        "妈妈被衣服洗干净了",
        "小狗把骨头藏起来了",
        "小狗被骨头藏起来了",
    ]
)
# Bare sentences with a BOM, a quoted line with a comma, a blank line inside, two at the end.
SENTENCES_LF = (
    BOM
    + "那辆车被偷走了\n那辆车被出发了\n\n"
    + '"他的钱包丢了,后来被找到了"\n"他的钱包丢了,后来被睡觉了"\n\n\n'
)
# Named columns, CRLF, a quoted sentence with a comma, an unnamed index column first.
NAMED = "\r\n".join(
    [
        ",index,phenomenon,paradigm,sentence,label",
        "0,0,coverb,coverb_with,王芳跟同学讨论了问题,1",
        "1,1,coverb,coverb_with,王芳于同学讨论了问题,0",
        '2,2,coverb,coverb_with,"放学以后,赵强同朋友打了篮球",1',
        '3,3,coverb,coverb_with,"放学以后,赵强冲朋友打了篮球",0',
        "",
    ]
)

FILES = {
    "anaphor_agreement_gender_1000.csv": UNNAMED,
    "classifier_1000.csv": UNNAMED_CRLF,
    "ba_construction_1000.csv": SENTENCES_CRLF,
    "passive_formal.csv": SENTENCES_LF,
    "coverb_with.csv": NAMED,
}


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_bytes(text.encode("utf-8"))  # bytes: CRLF stays CRLF
    return folder


def test_every_layout_is_read_into_its_pairs(tmp_path):
    dataset = read_dataset(write(tmp_path / "climp", FILES), "climp")
    by_file: dict[str, list] = {}
    for item in dataset.items:
        by_file.setdefault(item.meta["source_file"], []).append(item)
    pairs = {
        name: [tuple(i.prompt.vars.values()) for i in items] for name, items in by_file.items()
    }
    assert pairs == {
        "anaphor_agreement_gender_1000.csv": [
            ("王丽娜批评了她自己", "王丽娜批评了它自己"),
            ("陈建国照顾过他自己", "陈建国照顾过它自己"),  # written ungrammatical first
            ("张伟受伤以后,一直在责怪他自己", "张伟受伤以后,一直在责怪它自己"),
        ],
        "classifier_1000.csv": [
            ("刘洋买了一本杂志", "刘洋买了一匹杂志"),
            ("院子里停着两辆自行车", "院子里停着两张自行车"),
        ],
        "ba_construction_1000.csv": [
            ("李明把作业写完了", "李明被作业写完了"),
            ("妈妈把衣服洗干净了", "妈妈被衣服洗干净了"),
            ("小狗把骨头藏起来了", "小狗被骨头藏起来了"),
        ],
        "passive_formal.csv": [
            ("那辆车被偷走了", "那辆车被出发了"),
            ("他的钱包丢了,后来被找到了", "他的钱包丢了,后来被睡觉了"),
        ],
        "coverb_with.csv": [
            ("王芳跟同学讨论了问题", "王芳于同学讨论了问题"),
            ("放学以后,赵强同朋友打了篮球", "放学以后,赵强冲朋友打了篮球"),
        ],
    }
    assert all(i.task == "CLIMP" and i.answer == "good" for i in dataset.items)
    first = by_file["anaphor_agreement_gender_1000.csv"]
    assert [(i.meta["phenomenon"], i.meta["paradigm"], i.meta["index"]) for i in first] == [
        ("anaphor_agreement", "anaphor_agreement_gender", "0"),
        ("anaphor_agreement", "anaphor_agreement_gender", "2"),
        ("anaphor_agreement", "anaphor_agreement_gender", "4"),
    ]
    # without columns, the file names the paradigm (its size suffix dropped)
    ba = by_file["ba_construction_1000.csv"]
    assert {(i.meta["phenomenon"], i.meta["paradigm"]) for i in ba} == {
        ("ba_construction", "ba_construction")
    }
    assert [dataset.lines[i.id] for i in ba] == [1, 3, 5]
    assert [dataset.lines[i.id] for i in by_file["passive_formal.csv"]] == [1, 4]
    assert [i.meta["paradigm"] for i in by_file["coverb_with.csv"]] == ["coverb_with"] * 2
    assert dataset.info["climp_files"] == [
        {"file": "anaphor_agreement_gender_1000.csv", "layout": LAYOUTS["unnamed"], "pairs": 3},
        {"file": "ba_construction_1000.csv", "layout": LAYOUTS["sentences"], "pairs": 3},
        {"file": "classifier_1000.csv", "layout": LAYOUTS["unnamed"], "pairs": 2},
        {"file": "coverb_with.csv", "layout": LAYOUTS["named"], "pairs": 2},
        {"file": "passive_formal.csv", "layout": LAYOUTS["sentences"], "pairs": 2},
    ]
    assert len({i.id for i in dataset.items}) == len(dataset.items) == 12


def test_lone_carriage_returns_end_lines_as_line_feeds_do(tmp_path):
    """Files saved with classic Mac line ends (a CR alone) read into the same pairs, lines and
    layouts as with LF or CRLF."""
    lf = {name: text.replace("\r\n", "\n") for name, text in FILES.items()}
    cr = {name: text.replace("\n", "\r") for name, text in lf.items()}
    assert all("\n" not in text for text in cr.values())
    read_lf = read_dataset(write(tmp_path / "lf", lf), "climp")
    read_cr = read_dataset(write(tmp_path / "cr", cr), "climp")
    assert [i.prompt.vars for i in read_cr.items] == [i.prompt.vars for i in read_lf.items]
    assert read_cr.lines == read_lf.lines
    assert read_cr.info["climp_files"] == read_lf.info["climp_files"]
    assert len(read_cr.items) == 12


HEADER = ",0,1,2,3\n"
ROW = "{n},classifier,classifier,{sentence},{label}\n"


def unnamed(*rows: tuple[str, str]) -> str:
    return HEADER + "".join(
        ROW.format(n=n, sentence=s, label=lab) for n, (s, lab) in enumerate(rows)
    )


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        (  # the sentence and label cells are missing
            HEADER + "0,classifier,classifier,刘洋买了一本杂志,1\n1,classifier,classifier\n",
            3,
            "sentence",
            "missing",
        ),
        (  # the label cell is missing
            HEADER + "0,classifier,classifier,刘洋买了一本杂志,1\n1,classifier,classifier,x\n",
            3,
            "label",
            "missing",
        ),
        (  # a comma in an unquoted sentence makes one cell too many
            HEADER + "0,classifier,classifier,放学以后,刘洋买了一本杂志,1\n",
            2,
            "sentence",
            "quote a sentence",
        ),
        (unnamed(("刘洋买了一本杂志", "1"), ("刘洋买了一匹杂志", "是")), 3, "label", "not '是'"),
        (
            unnamed(("刘洋买了一本杂志", "1"), ("刘洋买了一匹杂志", "1")),
            3,
            "label",
            "one row labelled 1 and one labelled 0",
        ),
        (unnamed(("刘洋买了一本杂志", "1"), ("", "0")), 3, "sentence", "empty sentence"),
        (unnamed(("刘洋买了一本杂志", "1")), 2, "sentence", "odd number of sentences (1)"),
        (HEADER, 2, "sentence", "no sentences"),
        ("index,phenomenon,paradigm,Sentence\n0,a,b,刘洋买了一本杂志\n", 1, "label", "no label"),
        (
            "sentence,label\r\n刘洋买了一本杂志,1\r\n刘洋买了一匹杂志\r\n",
            3,
            "label",
            "missing",
        ),
        ("李明把作业写完了\r\n李明被作业写完了\r\n\r\n小狗把骨头藏起来了", 4, "sentence", "odd"),
        ("\n\n", 1, None, "file is empty"),
        (  # a quote that is never closed
            HEADER
            + '0,classifier,classifier,"刘洋买了一本杂志,1\n1,classifier,classifier,刘洋买了,0\n',
            2,
            "sentence",
            "malformed CSV (unexpected end of data",
        ),
        (  # a quote inside a quoted sentence, not doubled
            HEADER + '0,classifier,classifier,"他说,"好"",1\n1,classifier,classifier,他说,0\n',
            2,
            "sentence",
            "malformed CSV (',' expected",
        ),
        (
            'index,sentence,label\n0,刘洋买了一本杂志,1\n1,刘洋买了一匹杂志,"0\n',
            3,
            "label",
            "malformed CSV",
        ),
    ],
)
def test_a_malformed_file_is_one_error_naming_file_line_and_field(
    tmp_path, text, line, field, words
):
    path = tmp_path / "classifier_1000.csv"
    path.write_bytes(text.encode("utf-8"))
    with pytest.raises(InputError) as caught:
        read_dataset(path, "climp")
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
    assert words in str(caught.value)


def test_the_command_line_says_it_in_one_line_and_leaves_no_run_folder(tmp_path):
    folder = write(tmp_path / "climp", {**FILES, "passive_formal.csv": "那辆车被偷走了\n"})
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "eval",
            str(folder),
            "--format",
            "climp",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "passive_formal.csv:1: field 'sentence': an odd number of sentences" in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_folder_the_zip_unpacks_to_is_read_from_its_sub_folder(tmp_path):
    # CLiMP's zip unpacks to CLiMP_corpus/ beside __MACOSX/ (resource forks named like the
    # CSV files, which are not text); dot files are skipped too.
    unpacked = tmp_path / "unz"
    write(unpacked / "CLiMP_corpus", FILES)
    (unpacked / "CLiMP_corpus" / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    forks = unpacked / "__MACOSX" / "CLiMP_corpus"
    forks.mkdir(parents=True)
    (forks / "._classifier_1000.csv").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    (unpacked / ".hidden").mkdir()
    write(unpacked / ".hidden", {"stray.csv": "不是数据\n"})
    dataset = read_dataset(unpacked, "climp")
    direct = read_dataset(unpacked / "CLiMP_corpus", "climp")
    assert [i.prompt.vars for i in dataset.items] == [i.prompt.vars for i in direct.items]
    assert [i.id for i in dataset.items] == [i.id for i in direct.items]
    assert dataset.info["files"] == [f"CLiMP_corpus/{name}" for name in sorted(FILES)]
    assert [f["file"] for f in dataset.info["climp_files"]] == dataset.info["files"]


def test_a_folder_without_csv_files_below_it_says_so(tmp_path):
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "._a.csv").write_bytes(b"\x00\x05\x16\x07")
    with pytest.raises(InputError, match="no .csv files in this folder or its sub-folders"):
        read_dataset(tmp_path, "climp")


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # the released pandas dump without its `,0,1,2,3` header
        (
            "0,classifier,classifier,刘洋买了一本杂志,1\n1,classifier,classifier,刘洋买了一匹杂志,0\n",
            1,
        ),
        # `sentence,label` rows without their header
        ("刘洋买了一本杂志,1\n刘洋买了一匹杂志,0\n", 1),
        # a row index before the sentence, after two bare sentences
        ("李明把作业写完了\n李明被作业写完了\n2,李明把饭吃完了,x\n", 3),
    ],
)
def test_a_header_less_file_of_csv_records_is_refused(tmp_path, text, line):
    path = tmp_path / "classifier_1000.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dataset(path, "climp")
    assert (caught.value.path, caught.value.line, caught.value.field) == (
        str(path),
        line,
        "sentence",
    )
    assert "a CSV record (a row index or a 0/1 label column), not a sentence" in str(caught.value)
    assert "`,0,1,2,3`" in str(caught.value) and "`sentence,label`" in str(caught.value)
