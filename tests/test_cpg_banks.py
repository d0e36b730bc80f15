import re
from collections import Counter

import pytest

from gramagents.recipes.cpg.banks import bank_sentences, build_banks, point_forms
from gramagents.recipes.cpg.params import TASK_PARAMS, BankParams
from gramagents.recipes.cpg.table import read_grammar_table
from gramagents.records import Instance
from gramagents.sources.points import source_instances
from gramagents.tasks.registry import BuildResources

from .conftest import EXAMPLE_TABLE
from .helpers import char_embed

SKIPPING = BankParams(skip_literal_matches=True)


def banks(seed=1234, instances=None, options=None, **params):
    points = read_grammar_table(EXAMPLE_TABLE)
    if instances is None:
        instances = source_instances(points)
    tasks = {
        name: model.model_validate(params.get(name, {})) for name, model in TASK_PARAMS.items()
    }
    items = build_banks(
        points,
        instances,
        tasks,
        options or BankParams(),
        BuildResources(seed=seed, embed=char_embed),
    )
    return points, items


def of(items, task):
    return [i for i in items if i.task == task]


def test_sizes_follow_the_tables_arithmetic():
    options = BankParams()  # the released way: literal matches asked too
    points, items = banks(options=options)
    sentences = sum(len(p.examples) for p in points)
    counts = Counter(i.task for i in items)
    assert counts["SINGLE-T"] == counts["SIM-GRA"] == sentences
    assert counts["BATCH-T"] == len(points)
    category = Counter((p.language, p.category) for p in points)
    pairs = sum(n * (n - 1) for n in category.values())  # group-pairs: every ordered pair
    assert counts["SINGLE-F"] == counts["BATCH-F"] == pairs == 62
    same = {"negatives_per_sentence": 2, "negatives_from": "same-category"}
    _, items = banks(options=options, **{"SINGLE-F": same})
    pools = {p.id: category[p.language, p.category] - 1 for p in points}  # same-category others
    assert Counter(i.task for i in items)["SINGLE-F"] == sum(
        len(p.examples) * min(2, pools[p.id]) for p in points
    )
    _, skipping = banks(options=SKIPPING, **{"SINGLE-F": same})
    per_sentence = Counter(i.meta["sentence_id"] for i in of(skipping, "SINGLE-F"))
    assert len(per_sentence) == sentences and min(per_sentence.values()) >= 1
    categories = Counter((p.language, p.category) for p in points)
    in_shared = sum(len(p.examples) for p in points if categories[p.language, p.category] >= 2)
    assert counts["CAT-GRA"] == in_shared
    with_ten = [p for p in points if len(p.confusers) >= 10]
    assert counts["CON-INS-F10"] == len(with_ten) == 8
    assert counts["CON-INS-T5F5"] == len([p for p in with_ten if len(p.examples) >= 5])
    assert len({i.id for i in items}) == len(items)


def test_single_t_asks_each_sentence_with_its_own_point_in_its_language():
    points, items = banks()
    by_id = {p.id: p for p in points}
    for item in of(items, "SINGLE-T"):
        point = by_id[item.meta["point"]]
        assert item.answer == "T"
        assert item.prompt.vars["point"] == point.label()
        assert item.prompt.vars["sentence"] in point.examples
        assert item.prompt.template == f"cpg/single.{'zh' if point.language == 'zh' else 'en'}.md"
        assert item.meta["provenance"]["source"][0]["line"] >= 1


@pytest.mark.parametrize(
    "where", ["group-pairs", "same-category", "other-category", "similar", "any"]
)
def test_single_f_asks_points_a_sentence_does_not_show(where):
    single_f = {"negatives_per_sentence": 2, "negatives_from": where}
    points, items = banks(options=SKIPPING, **{"SINGLE-F": single_f})
    by_id = {p.id: p for p in points}
    for item in of(items, "SINGLE-F"):
        own, asked = by_id[item.meta["point"]], by_id[item.meta["asked_point"]]
        assert item.answer == "F" and asked.id != own.id and asked.language == own.language
        assert item.prompt.vars["point"] == asked.label()
        assert not any(form in item.prompt.vars["sentence"] for form in point_forms(asked))
        if where == "other-category":
            assert asked.category != own.category
        if where == "same-category":
            assert asked.category == own.category or own.category not in {
                p.category for p in points if p.id != own.id
            }
    pairs = Counter((i.meta["sentence_id"], i.meta["asked_point"]) for i in of(items, "SINGLE-F"))
    assert max(pairs.values()) == 1


def test_a_sentence_showing_a_points_form_is_not_asked_as_its_negative():
    points, items = banks(options=SKIPPING)
    neng = "明天的会你能参加吗？"  # a 能 sentence that shows 会
    asked = [
        i.meta["asked_point"] for i in of(items, "SINGLE-F") if i.prompt.vars["sentence"] == neng
    ]
    assert "1001" not in asked
    batch_f = next(i for i in of(items, "BATCH-F") if i.meta["point"] == "1001")
    assert all("会" not in s for s in batch_f.prompt.vars["sentences"])
    assert point_forms(next(p for p in points if p.id == "1001")) == {"会"}
    assert point_forms(next(p for p in points if p.id == "E101")) == set()


def test_batch_banks_number_their_sentences_and_gold():
    points, items = banks()
    by_id = {p.id: p for p in points}
    for item in of(items, "BATCH-T"):
        point = by_id[item.meta["point"]]
        assert item.prompt.vars["sentences"] == point.examples[:9]
        assert item.answer == "T" * item.prompt.vars["n"] == "T" * item.meta["n"]
    for item in of(items, "BATCH-F"):
        point = by_id[item.meta["point"]]
        sentences = item.prompt.vars["sentences"]
        assert item.answer == "F" * len(sentences) and 2 <= len(sentences) <= 9
        owners = {sid.split("/")[0] for sid in item.meta["sentence_ids"]}
        assert point.id not in owners
        assert {by_id[o].language for o in owners} == {point.language}


def test_sim_gra_has_five_distinct_options_with_the_own_point_once():
    points, items = banks()
    by_id = {p.id: p for p in points}
    letters = Counter()
    for item in of(items, "SIM-GRA"):
        options = item.meta["options"]
        assert [o["key"] for o in options] == list("ABCDE")
        assert len({o["text"] for o in options}) == 5
        right = [o for o in options if o["point"] == item.meta["point"]]
        assert len(right) == 1 and item.answer == right[0]["key"]
        assert all(
            by_id[o["point"]].language == by_id[item.meta["point"]].language for o in options
        )
        letters[item.answer] += 1
    assert len(letters) == 5  # the right answer is not always in one place


def test_cat_gra_lists_the_category_by_code():
    points, items = banks()
    by_id = {p.id: p for p in points}
    for item in of(items, "CAT-GRA"):
        point = by_id[item.meta["point"]]
        options = item.meta["options"]
        assert item.answer == point.id
        assert {o["key"] for o in options} == {p.id for p in points if p.category == point.category}
        assert item.prompt.vars["four_digits"] == bool(re.fullmatch(r"\d{4}", point.id))


def test_con_ins_banks_mix_confusing_instances_as_the_gold_says():
    points, items = banks()
    by_id = {p.id: p for p in points}
    for item in of(items, "CON-INS-F10"):
        point = by_id[item.meta["point"]]
        assert item.answer == "F" * 10
        assert set(item.prompt.vars["sentences"]) <= set(point.confusers)
    for item in of(items, "CON-INS-T5F5"):
        point = by_id[item.meta["point"]]
        assert sorted(item.answer) == sorted("TTTTTFFFFF")
        for letter, sentence in zip(item.answer, item.prompt.vars["sentences"], strict=True):
            assert sentence in (point.examples if letter == "T" else point.confusers)


def test_banks_are_deterministic_in_the_seed():
    _, first = banks(seed=7)
    _, again = banks(seed=7)
    _, other = banks(seed=8)
    assert [i.model_dump() for i in first] == [i.model_dump() for i in again]
    assert [i.model_dump() for i in first] != [i.model_dump() for i in other]


def test_accepted_rewrites_stand_in_for_their_source_sentence():
    points = read_grammar_table(EXAMPLE_TABLE)
    instances = source_instances(points)
    rewrite = Instance(
        id="1001/ex/0/rw",
        point_id="1001",
        text="他会弹吉他。",
        origin="agent",
        replaces="1001/ex/0",
        source_text="我会说一点儿中文。",
    )
    rejected = Instance(
        id="1001/ex/1/rw",
        point_id="1001",
        text="坏句子",
        origin="agent",
        replaces="1001/ex/1",
        status="rejected",
    )
    everything = [*instances, rewrite, rejected]
    chosen = bank_sentences(points, everything, "prefer-rewritten")["1001"]
    assert [i.text for i in chosen][:2] == ["他会弹吉他。", "她会开车，但是不会骑自行车。"]
    only = bank_sentences(points, everything, "rewritten-only")["1001"]
    assert [i.text for i in only] == ["他会弹吉他。"]
    source = bank_sentences(points, everything, "source")["1001"]
    assert all(i.origin == "source" for i in source)
