"""Reading bracketed trees: the shapes files come in, empty elements, and located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.recipes.syntax.reader import TREES, read_treebank
from gramagents.recipes.syntax.treebank import DOWNLOAD_HINT
from gramagents.recipes.syntax.trees import split_label
from gramagents.sources import ReadOptions

WSJ = """( (S
    (NP-SBJ-1 (NNS Desks) )
    (VP (VBP are)
      (VP (VBN cleared)
        (NP (-NONE- *-1) )
        (PP (IN by)
          (NP-LGS (NNP John) ))))
    (. .) ))
( (S (NP-SBJ (PRP I)) (VP (VBP do) (RB n't) (VP (VB know))) (. .)) )
"""


def read(path: Path):
    return read_treebank(path, ReadOptions())


def sentences(path: Path) -> list[str]:
    return [r.sentence for r in read(path).records]


def test_wsj_files_spread_over_lines_give_one_record_per_tree(tmp_path):
    (tmp_path / "wsj_0001.mrg").write_text(WSJ)
    data = read(tmp_path)
    assert [(r.id, r.line) for r in data.records] == [("wsj_0001.mrg#1", 1), ("wsj_0001.mrg#2", 9)]
    assert [r.sentence for r in data.records] == ["Desks are cleared by John.", "I don't know."]
    assert data.stats == {"files": 1, "trees": 2}
    assert data.files == [{"file": "wsj_0001.mrg", "read": 2, "parsed": 2, "refused": 0}]


def test_bare_root_and_one_per_line_trees_with_crlf_bom_and_comments(tmp_path):
    (tmp_path / "a.txt").write_bytes(
        "\ufeff# parsed by hand\r\n(ROOT (S (NP-SBJ (NNP Ann)) (VP (VBZ sings)) (. .)))\r\n"
        "% another comment\r\n(TOP (S (NP-SBJ (NNP Bo)) (VP (VBD sang)) (. .)))\r\n"
        "(S (NP-SBJ (PRP We)) (VP (VBP dance)) (. .))\r\n".encode()
    )
    (tmp_path / "notes.md").write_text("not a treebank file, and not read")
    data = read(tmp_path)
    assert [r.sentence for r in data.records] == ["Ann sings.", "Bo sang.", "We dance."]
    assert [r.line for r in data.records] == [2, 4, 5]
    # the root wrappers are gone: the tree starts at the clause
    assert all(data.context[TREES][r.id].root.label == "S" for r in data.records)


def test_a_single_file_can_be_the_source(tmp_path):
    (tmp_path / "one.mrg").write_text(WSJ)
    assert len(read(tmp_path / "one.mrg").records) == 2


def test_empty_elements_and_trace_indices_are_not_printed(tmp_path):
    (tmp_path / "t.mrg").write_text(
        "( (S (NP-SBJ-1 (PRP He)) (VP (VBD wanted) (S (NP-SBJ (-NONE- *-1)) "
        "(VP (TO to) (VP (VB go))))) (. .)) )"
    )
    data = read(tmp_path)
    [record] = data.records
    tree = data.context[TREES][record.id]
    assert record.sentence == "He wanted to go."
    assert [n.label for n in tree.nodes if n.category == "NP"] == ["NP-SBJ", "NP-SBJ"]
    understood = [n for n in tree.nodes if n.label == "NP-SBJ"][1]
    assert understood.empty and tree.text(understood.words) == ""
    assert "*-1" not in record.sentence and "-NONE-" not in record.sentence


@pytest.mark.parametrize(
    ("raw", "label", "category", "tags"),
    [
        ("NP-SBJ-1", "NP-SBJ", "NP", {"SBJ"}),
        ("NP=2", "NP", "NP", set()),
        # function tags in alphabetical order: the treebank writes both orders
        ("PP-LOC-CLR", "PP-CLR-LOC", "PP", {"LOC", "CLR"}),
        ("PP-PRD-LOC-1", "PP-LOC-PRD", "PP", {"LOC", "PRD"}),
        ("-NONE-", "-NONE-", "-NONE-", set()),
        ("-LRB-", "-LRB-", "-LRB-", set()),
        ("WHNP-12", "WHNP", "WHNP", set()),
        ("PRP$", "PRP$", "PRP$", set()),
        (",", ",", ",", set()),
    ],
)
def test_labels_split_into_category_and_function_tags(raw, label, category, tags):
    assert split_label(raw) == (label, category, frozenset(tags))


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\n\n(S (NP (NN x)) (VP (VB y))))\n", 3,
         "closes no open"),
        ("(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\n(S (NP (NN x)\n (VP (VB y))\n", 2,
         "never closed"),
        ("(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\nsome stray text\n", 2,
         "text outside a bracketed tree"),
        # a ')' missing in the middle of a file: the tree it belongs to is named
        ("(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\n(S (NP (NN x)\n  (VP (VB y)) (. .))\n"
         "(S (NP-SBJ (PRP I)) (VP (VBP run)) (. .))\n", 2, "never closed"),
        ("(S)\n", 1, "no words"),
    ],
)  # fmt: skip
def test_a_tree_that_does_not_parse_is_one_error_naming_file_and_line(tmp_path, text, line, says):
    (tmp_path / "good.mrg").write_text(WSJ)
    (tmp_path / "zz-bad.mrg").write_text(text)
    with pytest.raises(InputError) as caught:
        read(tmp_path)
    assert caught.value.path.endswith("zz-bad.mrg")
    assert caught.value.line == line
    assert says in caught.value.message
    assert "\n" not in str(caught.value)


def test_a_folder_without_treebank_files_is_an_error(tmp_path):
    (tmp_path / "readme.md").write_text("nothing here")
    with pytest.raises(InputError, match="no treebank files"):
        read(tmp_path)


def test_nltk_treebank_without_the_download_names_the_step(monkeypatch):
    import nltk

    def missing(resource: str, *args, **kwargs):
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", missing)
    with pytest.raises(InputError) as caught:
        read(Path("nltk:treebank"))
    message = str(caught.value)
    assert message.startswith("nltk:treebank: ") and "\n" not in message
    assert "nltk.download('treebank')" in message and DOWNLOAD_HINT in message


def test_nltk_treebank_reads_the_installed_sample(tmp_path, monkeypatch):
    import nltk

    combined = tmp_path / "corpora" / "treebank" / "combined"
    combined.mkdir(parents=True)
    (combined / "wsj_0001.mrg").write_text(WSJ)
    monkeypatch.setattr(nltk.data, "find", lambda resource, *a, **k: str(tmp_path / resource))
    data = read(Path("nltk:treebank"))
    assert [r.id for r in data.records] == ["wsj_0001.mrg#1", "wsj_0001.mrg#2"]
    assert data.location == combined and data.info["location"] == str(combined)


def test_limit_keeps_the_first_trees(tmp_path):
    (tmp_path / "a.mrg").write_text(WSJ)
    (tmp_path / "b.mrg").write_text(WSJ)
    data = read_treebank(tmp_path, ReadOptions(limit=3))
    assert [r.id for r in data.records] == ["a.mrg#1", "a.mrg#2", "b.mrg#1"]
