import pytest

from gramagents.scoring.extract import extract
from gramagents.scoring.metrics import score_item


@pytest.mark.parametrize(
    ("text", "value", "rule"),
    [
        ("T", "T", "exact"),
        ("F", "F", "exact"),
        (" **F** ", "F", "exact"),
        ("T。", "T", "exact"),
        ("true", "T", "exact"),
        ("答案：F", "F", "labelled"),
        ("回答：T", "T", "labelled"),
        ("The answer is F.", "F", "labelled"),
        ("Answer: **T**", "T", "labelled"),
        ("T\n因为句子里有“会”。", "T", "leading"),
        ("False. The sentence does not use the point.", "F", "leading"),
        ("I would say T here.", "T", "sole-letter"),
        ('The sentence "Can you swim?" contains the grammar point [can].', "T", "statement"),
        ("该句子不包含该语法点。", "F", "statement"),
        ("Yes, it does.", "T", "yes-no"),
        ("不是。", "F", "yes-no"),
    ],
)
def test_tf_answers_are_read(text, value, rule):
    found = extract("tf", text)
    assert (found.value, found.rule) == (value, rule)
    assert not found.invalid


@pytest.mark.parametrize(
    "text",
    [
        "",
        "我会说一点儿中文。",
        "T or F",
        "TFTTFTTTF",
        "1. T 2. F",
        "The sentence is grammatical.",
        "tomorrow",
        "答案：T，也可能是F",
    ],
)
def test_unreadable_answers_are_invalid_never_guessed(text):
    found = extract("tf", text)
    assert found.invalid and found.value is None and found.rule == "invalid"


def test_a_failed_request_is_invalid():
    assert extract("tf", None).invalid


def test_accuracy_counts_invalid_as_wrong():
    assert score_item("acc", extract("tf", "T"), "T").scores == {"acc": 1.0}
    assert score_item("acc", extract("tf", "F"), "T").scores == {"acc": 0.0}
    assert score_item("acc", extract("tf", "maybe"), "T").scores == {"acc": 0.0}


@pytest.mark.parametrize(
    ("text", "n", "value", "rule"),
    [
        ("TFTTFTTTF", 9, "TFTTFTTTF", "compact"),
        ("T F T T", 4, "TFTT", "compact"),
        ("TTTTFTTTT", 10, "TTTTFTTTT", "compact"),
        ("TFTTFTTTFFT", 10, "TFTTFTTTFF", "compact"),
        ("1. T 2. F 3. T", 3, "TFT", "numbered"),
        ("1.T\n2.F\n3.T\n4.T", 4, "TFTT", "numbered"),
        ("1. T\n3. F", 3, "T?F", "numbered"),
        ("（1）T （2）F", 2, "TF", "numbered"),
        ("第一句：T\n第二句：F\n第三句：F", 3, "TFF", "letters"),
        ("Sentence one is T, sentence two is F.", 2, "TF", "letters"),
    ],
)
def test_tf_sequences_are_read_in_order(text, n, value, rule):
    found = extract("tf-sequence", text, {"n": n})
    assert (found.value, found.rule) == (value, rule)


@pytest.mark.parametrize(
    "text", ["", "我不知道。", "1. 笔记本在书架上。\n2. 钥匙在抽屉里。", "True"]
)
def test_sequences_without_letters_are_invalid(text):
    assert extract("tf-sequence", text, {"n": 9}).invalid


def test_sub_question_accuracy_counts_positions():
    assert score_item(
        "sub-acc", extract("tf-sequence", "TTTTFTTTT", {"n": 10}), "TTTTFTTTFF"
    ).scores == {"acc": 0.8}
    assert score_item("sub-acc", extract("tf-sequence", "1. T", {"n": 3}), "TTT").scores == {
        "acc": pytest.approx(1 / 3)
    }
    assert score_item("sub-acc", extract("tf-sequence", "nothing", {"n": 3}), "TTT").scores == {
        "acc": 0.0
    }


LETTERS = {
    "options": [
        {"key": k, "text": t}
        for k, t in [
            ("A", "能愿动词：想"),
            ("B", "能愿动词：会"),
            ("C", "能愿动词：要"),
            ("D", "程度副词：很"),
            ("E", "能愿动词：能"),
        ]
    ]
}


@pytest.mark.parametrize(
    ("text", "value", "rule"),
    [
        ("B", "B", "exact"),
        ("b", "B", "exact"),
        ("(B)", "B", "exact"),
        ("选B", "B", "labelled"),
        ("答案是：E", "E", "labelled"),
        ("The answer is C.", "C", "labelled"),
        ("B. 能愿动词：会", "B", "leading"),
        ("我觉得是 D 吧", "D", "sole-letter"),
        ("这个句子体现的是能愿动词：要的用法", "C", "option-text"),
    ],
)
def test_option_letters_are_read(text, value, rule):
    found = extract("letter", text, LETTERS)
    assert (found.value, found.rule) == (value, rule)


@pytest.mark.parametrize("text", ["F", "A or B", "选F", "我不知道", "能愿动词"])
def test_letters_that_are_not_a_single_option_are_invalid(text):
    assert extract("letter", text, LETTERS).invalid


CODES = {
    "options": [
        {"key": "1063", "text": "“是”字句：表示等同或类属"},
        {"key": "1064", "text": "“是”字句：表示说明或特征"},
        {"key": "1065", "text": "“是”字句：表示存在"},
    ]
}


@pytest.mark.parametrize(
    ("text", "value", "rule"),
    [
        ("1064", "1064", "exact"),
        ("1064。", "1064", "exact"),
        ("答案：1063", "1063", "sole-code"),
        ("The sentence shows 1065 (existence).", "1065", "sole-code"),
        ("它表示说明或特征，所以是“是”字句：表示说明或特征", "1064", "option-text"),
    ],
)
def test_codes_are_read(text, value, rule):
    found = extract("code", text, CODES)
    assert (found.value, found.rule) == (value, rule)


@pytest.mark.parametrize("text", ["1066", "1063还是1064", "10634", "B", ""])
def test_codes_not_among_the_options_are_invalid(text):
    assert extract("code", text, CODES).invalid


@pytest.fixture(scope="module")
def example_items(tmp_path_factory):
    """The example CPG table's banks, built without agents."""
    import asyncio

    from gramagents.workflow.build import BuildOptions, run_build

    from .conftest import EXAMPLE_TABLE

    run = tmp_path_factory.mktemp("example") / "b"
    options = BuildOptions(source=EXAMPLE_TABLE, agents=False, run_dir=run, use_cache=False)
    return asyncio.run(run_build("cpg", options)).items


def _reading(item, reply):
    from gramagents.tasks import get_task
    from gramagents.templates import load_prompt

    messages = load_prompt(item.prompt.template).render(item.prompt.vars)
    known = {**item.prompt.vars, **item.meta}
    return extract(get_task(item.task).extractor, reply, known, messages)


def test_a_sentence_given_back_is_an_echo_whatever_the_item(example_items):
    """The same behaviour, the same reason: long sentences and short ones, whole or cut off
    by the length limit after a few characters, alone or under list numbers."""
    readings = {}
    for item in example_items:
        variables = item.prompt.vars
        if item.task.startswith("SINGLE"):
            sentence = variables["sentence"]
            for reply in (sentence, sentence[: max(4, len(sentence) // 2)]):
                readings[item.id, reply] = _reading(item, reply).reason
        elif item.task.startswith("BATCH") and len(variables["sentences"]) > 1:
            shuffled = variables["sentences"][1:] + variables["sentences"][:1]  # other numbers
            reply = "\n".join(f"{n}. {s}" for n, s in enumerate(shuffled, start=1))
            readings[item.id, reply] = _reading(item, reply).reason
    assert len(readings) > 300
    assert {reason for reason in readings.values()} == {"echo"}, [
        key for key, reason in readings.items() if reason != "echo"
    ][:5]


def test_a_bare_option_line_is_an_echo_and_the_option_in_the_model_s_words_is_read(
    example_items,
):
    checked = 0
    for item in example_items:
        if item.task not in ("SIM-GRA", "CAT-GRA"):
            continue
        option = next(o for o in item.prompt.vars["options"] if o["key"] == item.answer)
        line = (
            f"{option['key']}. {option['text']}"
            if item.task == "SIM-GRA"
            else (f"{option['key']}.{option['text']}")
        )
        assert _reading(item, line).reason == "echo", item.id  # as the prompt writes it
        assert _reading(item, f"答案：{line}").value == item.answer, item.id
        checked += 1
    assert checked > 200
