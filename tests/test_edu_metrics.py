import math

import pytest
from scipy.stats import pearsonr
from sklearn.metrics import cohen_kappa_score

from gramagents.judging.statistics import pearson, quadratic_kappa
from gramagents.models.hf import _buckets, _cut_middle
from gramagents.recipes.edu.metrics import (
    extract_choice,
    extract_choices,
    extract_label,
    extract_score,
    rmse,
    rouge_l,
)


@pytest.mark.parametrize(
    ("text", "letter", "rule"),
    [
        ("B", "B", "bare"),
        ("（C）", "C", "bare"),
        ("根据题意，答案是B。", "B", "answer-is-zh"),
        ("答案：D", "D", "answer-is-zh"),
        ("我选择A，因为……", "A", "choose-zh"),
        ("The answer is (C).", "C", "answer-is-en"),
        ("answer: b", None, "invalid"),  # lower-case letters are not option letters
        ("A. 长×宽是对的", "A", "leading"),
        ("我觉得 D 比较合理", "D", "sole-letter"),
        ("A 或者 B 都可以", None, "invalid"),
        ("不知道", None, "invalid"),
        ("答案是E", None, "invalid"),  # not an option of this item
    ],
)
def test_the_choice_extraction_chain(text, letter, rule):
    assert extract_choice(text, "ABCD") == (letter, rule)


@pytest.mark.parametrize(
    ("text", "letters", "rule"),
    [
        ("BD", "BD", "bare"),
        ("B、D", "BD", "bare"),
        ("答案是D和B。", "BD", "answer-is-zh"),
        ("我选择A，C", "AC", "choose-zh"),
        ("The correct answers are A and C.", "AC", "answer-is-en"),
        ("AC. 鲸和蝙蝠都是哺乳动物", "AC", "leading"),
        ("答案是BE", None, "invalid"),  # E is not an option of this item
        ("鲸和蝙蝠", None, "invalid"),
    ],
)
def test_several_letters_are_read_from_a_reply(text, letters, rule):
    assert extract_choices(text, "ABCD") == (letters, rule)


def test_scores_and_labels_are_read_from_replies():
    assert extract_score("得分：85分") == 85
    assert extract_score("Score: 72/100") == 72
    assert extract_score("这篇作文写得不错，我给 150 分，不，应是 90") == 90
    assert extract_score("没有分数") is None
    assert extract_label("类别：7") == 7
    assert extract_label("属于第 12 类，也许是 3") == 3
    assert extract_label("无法判断") is None


def test_rouge_l_is_character_level_for_chinese():
    # LCS of 你好世界 and 你们好世界呀 is 你好世界 (4): P = 4/4, R = 4/6.
    score = rouge_l("你好世界", "你们好世界呀")
    assert score.p == pytest.approx(1.0) and score.r == pytest.approx(4 / 6)
    assert score.f == pytest.approx(2 * 1 * (4 / 6) / (1 + 4 / 6))
    words = rouge_l("the cat sat", "the cat sat down")
    assert words.r == pytest.approx(3 / 4)
    assert rouge_l("abc", "xyz").f == 0.0


def test_qwk_rmse_and_pearson_match_the_references():
    a = [80, 60, 75, 90, 60, 70, 85]
    b = [85, 60, 70, 90, 65, 70, 80]
    assert quadratic_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert pearson(a, b) == pytest.approx(pearsonr(a, b)[0])
    squares = [(x - y) ** 2 for x, y in zip(a, b, strict=True)]
    assert rmse(a, b) == pytest.approx(math.sqrt(sum(squares) / 7))
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))


def test_inputs_longer_than_the_context_are_cut_in_the_middle():
    assert _cut_middle(list(range(10)), 4) == [0, 1, 8, 9]
    assert _cut_middle(list(range(10)), 5) == [0, 1, 7, 8, 9]
    assert _cut_middle([1, 2, 3], 10) == [1, 2, 3]


def test_batches_are_bucketed_by_length_so_a_long_prompt_pads_no_short_ones():
    lengths = [7900, 120, 100, 4000, 90, 3000, 60, 2100, 80]
    ordered = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches = list(_buckets(ordered, lengths, 3))
    assert [[lengths[i] for i in b] for b in batches] == [
        [7900, 4000],  # 3000 is less than half of 7900
        [3000, 2100],
        [120, 100, 90],  # at most three rows
        [80, 60],
    ]
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))


@pytest.mark.slow
def test_the_configured_context_cuts_long_prompts_in_the_middle(smollm2):
    from gramagents.errors import SpecError
    from gramagents.models import create_backend
    from gramagents.records import ChatRequest, GenParams, Message

    text = "开头的说明。" + "很长的文章。" * 400 + "最后的问题是什么？"
    request = ChatRequest(
        messages=[Message(role="user", content=text)], params=GenParams(max_tokens=16)
    )
    whole = smollm2.render(request)
    configured = create_backend("smollm2?max_length=256")
    cut = configured.render(request)
    assert len(whole) > 256 and len(cut) == 256 - 16
    assert cut[:120] == whole[:120] and cut[-120:] == whole[-120:]  # both ends kept
    assert configured.identity()["max_length"] == 256 and "max_length" not in smollm2.identity()
    with pytest.raises(SpecError, match="max_length must be an integer of 16 or more"):
        create_backend("smollm2?max_length=ten")
