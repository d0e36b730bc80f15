"""EduEval items as the release gives them: list golds, numbered options, answer-key skew, dedup.

The lines are written here in the release's layout (`Understanding/Poetry_Appreciation.jsonl`,
`ques_answer` as a list, `选项: 1. …`), never copied from it.
"""

import asyncio
import json
from collections import Counter

import pytest
from scipy.stats import chisquare

from gramagents.recipes.edu.metrics import rouge_l
from gramagents.recipes.edu.qc import exact_uniform_p, letter_skew
from gramagents.recipes.edu.sources import EduItem, read_edueval
from gramagents.workflow.filters import DedupOptions, dedup, jaccard, shingles
from gramagents.workflow.nodes import BuildView, NodeEnv, texts


def _write(root, folder, name, lines):
    (root / folder).mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (root / folder / name).write_text(text, encoding="utf-8")


def test_list_golds_are_their_elements_in_order_not_a_python_list(tmp_path):
    answers = ["(1) 写出了山居的清幽。", "(2) 借景抒情，表达闲适之情。"]
    _write(tmp_path, "Understanding", "Poetry_Appreciation.jsonl", [
        {"subject": "初中语文", "ques_type": "诗歌鉴赏", "ques_difficulty": "一般",
         "ques_content": "题目内容: 山居秋暝 (1) 前两句写了什么？ (2) 用了什么手法？",
         "ques_answer": answers},
    ])  # fmt: skip
    _write(tmp_path, "Understanding", "Reading_Comprehension.jsonl", [
        {"subject": "初中语文", "ques_type": "现代文阅读", "ques_content": "题目内容: 短文……",
         "ques_answer": ["只有一问的答案。"]},
    ])  # fmt: skip
    poem, reading = read_edueval(tmp_path).items
    assert poem.shape == "poetry" and poem.answer == "\n".join(answers)
    assert reading.shape == "reading" and reading.answer == "只有一问的答案。"
    # the reference ROUGE-L reads has no brackets or quotes: the answer itself scores 1
    assert rouge_l("\n".join(answers), poem.answer).f == 1.0
    assert not set("[]'\"") & set(poem.answer)


def test_numbered_options_make_a_choice_item(tmp_path):
    _write(tmp_path, "Understanding", "Junior_Understanding.jsonl", [
        {"subject": "初中历史", "ques_type": "选择题", "ques_difficulty": "较易",
         "ques_content": "题目内容: “开启新航程”是指选项: 1. 中美建交 2. 中美联合公报发表 "
                         "3. 乒乓外交 4. 基辛格访华",
         "ques_answer": ["2"]},
        {"subject": "初中英语", "ques_type": "选择题", "ques_difficulty": "较难",
         "ques_content": "题目内容: Which sound is different? 选项: 1. ch<u>ore</u> "
                         "2. p<u>our</u> 3. t<u>our</u>",
         "ques_answer": ["3"]},
        {"subject": "初中语文", "ques_type": "选择题",
         "ques_content": "题目内容: 下列说法正确的是（ ）A. 甲 B. 乙 C. 丙 D. 丁",
         "ques_answer": ["B"]},
    ])  # fmt: skip
    history, english, lettered = read_edueval(tmp_path).items
    assert history.shape == "mc" and history.answer == "B"
    assert history.prompt == "题目内容: “开启新航程”是指"
    assert history.options == {"A": "中美建交", "B": "中美联合公报发表", "C": "乒乓外交",
                               "D": "基辛格访华"}  # fmt: skip
    assert history.provenance == ["rules: options numbered 1-4, lettered in that order"]
    assert english.options == {"A": "ch<u>ore</u>", "B": "p<u>our</u>", "C": "t<u>our</u>"}
    assert english.answer == "C"
    assert lettered.answer == "B" and lettered.provenance == []


def _mc(n, answer, options=4, task="Ethics/Primary_Moral"):
    return EduItem(
        id=f"{task}#{n}", task=task, level="ethics", subject=None, grade=None,
        prompt=f"情境{n}：你会怎么做？", options={k: f"做法{k}" for k in "ABCDEFGH"[:options]},
        answer=answer, explanation=None, difficulty=None, metric="accuracy", shape="mc",
        source=f"f:{n}",
    )  # fmt: skip


def test_the_skew_check_tests_each_option_count_against_its_own_letters():
    # A balanced 4-option key, and two 6-option items keyed E and F: tested against A-F, not
    # against the letters of the whole file, they are nothing to look at.
    even = [_mc(n, "ABCD"[n % 4]) for n in range(40)] + [_mc(40, "E", 6), _mc(41, "F", 6)]
    flags, skewed, tested = letter_skew(even)
    assert (flags, skewed, tested) == ({}, [], 2)

    # D never the key of 48 four-option items (as in the release's Ethics files): one finding,
    # and three items keyed with the most over-represented letter go to review.
    keys = "AAAAABBBBCCC" * 4
    no_d = [_mc(n, key, task="Ethics/Senior_Ethics_Scenario") for n, key in enumerate(keys)]
    flags, [found], tested = letter_skew(even + no_d, spot_checks=3, seed=5)
    assert tested == 3 and (found.task, found.options) == ("Ethics/Senior_Ethics_Scenario", 4)
    assert found.counts == {"A": 20, "B": 16, "C": 12, "D": 0} and found.test == "chi-square"
    assert found.p_value == pytest.approx(chisquare([20, 16, 12, 0]).pvalue)
    assert len(flags) == 3 and all(k.startswith("Ethics/Senior_Ethics_Scenario#") for k in flags)
    by_id = {i.id: i for i in no_d}
    assert {by_id[k].answer for k in flags} == {"A"}
    assert all("keyed A 20, B 16, C 12, D 0 (chi-square p=" in r for r in flags.values())
    assert letter_skew(even + no_d, spot_checks=3, seed=5)[0] == flags  # drawn with the seed


def test_small_groups_get_the_exact_multinomial_test():
    # every outcome of 8 items over 4 letters no likelier than all eight A: the four "all X"
    assert exact_uniform_p([8, 0, 0, 0]) == pytest.approx(4 * 0.25**8)
    assert exact_uniform_p([2, 2, 2, 2]) == pytest.approx(1.0)  # the likeliest outcome
    flags, [found], _ = letter_skew([_mc(n, "A") for n in range(8)], spot_checks=2)
    assert found.test == "exact" and len(flags) == 2
    assert letter_skew([_mc(n, "AB"[n % 2]) for n in range(8)])[1] == []


PASSAGE = (
    "题目内容: 六位同学F、G、H、J、K、L依次发言，每人一次。已知：G在H之前；K紧接在F之后；"
    "L不是第一个，也不是最后一个；J在K之后。"
)


def _logic(n, question, answer):
    return EduItem(
        id=f"Reasoning/General_Logical_Inference#{n}", task="Reasoning/General_Logical_Inference",
        level="reasoning", subject=None, grade=None, prompt=PASSAGE + question,
        options={"A": "F", "B": "G", "C": "H", "D": "K"}, answer=answer, explanation=None,
        difficulty=None, metric="accuracy", shape="mc", source=f"f:{n}",
    )  # fmt: skip


def test_dedup_keeps_different_questions_on_a_shared_passage(tmp_path):
    items = [
        _logic(1, "如果J第一个发言，那么第二个发言的是谁？", "B"),
        _logic(2, "如果J第四个发言，那么第三个发言的是谁？", "B"),  # same key, other question
        _logic(3, "如果J第一个发言，那么第二个发言的是谁?", "B"),  # the first, retyped
        _logic(4, "如果J第一个发言，那么第二个发言的是谁？", "C"),  # the first, another key
    ]
    options = DedupOptions(
        fields=["prompt", "options"], group_by="shape", same=["answer", "options"],
        question="prompt",
    )  # fmt: skip
    view = BuildView(records={i.id: i for i in items})
    update = asyncio.run(dedup(view, options, NodeEnv(False, 1, lambda t, m: None)))
    assert update.removed == ["Reasoning/General_Logical_Inference#3"]
    [pair] = update.failures
    assert pair["duplicates"] == "Reasoning/General_Logical_Inference#1"
    a, b = texts([items[2], items[0]], options.fields)
    assert pair["jaccard"] == round(jaccard(shingles(a), shingles(b)), 3) >= 0.85
    assert pair["same_answer"] == "B"
    # without the question and gold checks, the shared passage makes all four one item
    loose = DedupOptions(fields=["prompt", "options"], group_by="shape")
    update = asyncio.run(dedup(view, loose, NodeEnv(False, 1, lambda t, m: None)))
    assert Counter(f["duplicates"] for f in update.failures) == {items[0].id: 3}
    assert all(f["jaccard"] >= 0.85 for f in update.failures)


def test_the_route_check_flags_only_levels_the_classifier_is_sure_of():
    from gramagents.recipes.edu.agents import RouteOptions, cross_check

    def item(n, level, prompt):
        return EduItem(
            id=f"{level}#{n}", task=f"{level}/T", level=level, subject=None, grade=None,
            prompt=prompt, options=None, answer="A", explanation=None, difficulty=None,
            metric="accuracy", shape="mc", source=f"f:{n}",
        )  # fmt: skip

    def embed(texts, model):  # memory items read as [1, 0], ethics ones as [0, 1]
        assert model == "tfidf-char"
        return [[4.0, 0.0] if "记" in t else [0.0, 4.0] if "德" in t else [0.5, 0.5] for t in texts]

    items = [item(n, "memory", f"记住公式{n}") for n in range(10)]
    items += [item(n, "ethics", f"道德情境{n}") for n in range(10)]
    items += [item(10, "memory", "道德情境十"), item(11, "memory", "一道说不清的题")]
    view = BuildView(records={i.id: i for i in items})
    update = asyncio.run(cross_check(view, RouteOptions(), NodeEnv(False, 1, embed)))
    # reads like ethics: flagged; ambiguous: its own level or another, never sure enough
    assert list(update.flags) == ["memory#10"]
    assert update.flags["memory#10"][0].startswith(
        "level: layout memory, router None, classifier ethics (p=0."
    )
    routes = {r.id: r.route for r in update.records}
    assert (
        routes["memory#10"]["classifier"] == "ethics" and routes["memory#10"]["classifier_p"] >= 0.7
    )
    assert routes["memory#11"]["classifier"] == "memory"  # ambiguous: its own level
    assert update.counts["flagged"] == 1 and update.counts["routed"] == 22
