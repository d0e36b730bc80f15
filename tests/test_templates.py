import pytest

from gramagents.errors import GramagentsError, InputError
from gramagents.templates import load_prompt


def test_packaged_single_template_uses_the_papers_wording():
    template = load_prompt("cpg/single.zh.md")
    [message] = template.render({"sentence": "我不会弹钢琴。", "point": "能愿动词：会"})
    assert message.role == "user"
    assert "请判断：在句子“" in message.content
    assert "我不会弹钢琴。" in message.content
    assert "是否包含语法点[能愿动词：会]?" in message.content
    assert message.content.endswith("如果不包含，请仅回答F")
    assert len(template.hash) == 64


def test_missing_variable_is_a_clear_error():
    with pytest.raises(GramagentsError, match="'point' is undefined"):
        load_prompt("cpg/single.en.md").render({"sentence": "x"})


def test_a_copy_in_the_working_directory_overrides_the_packaged_one(in_tmp):
    packaged = load_prompt("cpg/single.en.md")
    (in_tmp / "prompts" / "cpg").mkdir(parents=True)
    (in_tmp / "prompts" / "cpg" / "single.en.md").write_text(
        "---\nsystem: Be brief.\n---\nDoes '{{ sentence }}' use {{ point }}? T or F.\n"
    )
    edited = load_prompt("cpg/single.en.md")
    assert edited.hash != packaged.hash
    system, user = edited.render({"sentence": "I can swim.", "point": "can"})
    assert (system.role, system.content) == ("system", "Be brief.")
    assert user.content == "Does 'I can swim.' use can? T or F."


def test_template_syntax_errors_name_the_line(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "bad.md").write_text("---\ndescription: x\n---\nline one\n{% if %}\n")
    with pytest.raises(InputError) as caught:
        load_prompt("bad.md")
    assert caught.value.line == 5


def test_unknown_template_is_a_clear_error():
    with pytest.raises(GramagentsError, match="prompt 'cpg/none.md' not found"):
        load_prompt("cpg/none.md")


SOURCES = [
    "Plain text only.\n",
    "判断：{{ sentence }}\n语法点：{{name}}。\n\n",
    "Line one\r\nLine {{ n }}\r\n",
    "{{ a }}{{ b }} and {{ a }}",
    "no trailing newline {{ x }}",
]
VALUES = [
    {"sentence": "他是学生。", "name": "是", "n": 2, "a": None, "b": True, "x": 1.5},
    {"sentence": "", "name": "x\ny", "n": -1, "a": "A", "b": 0, "x": ["l", 1]},
    {"sentence": "{{ not a placeholder }}", "name": "%}", "n": 0.1, "a": {"k": 1}, "b": 3, "x": ""},
]


@pytest.mark.parametrize("source", SOURCES)
def test_plain_placeholder_templates_render_exactly_as_jinja(source):
    from gramagents.templates import _ENV, _Substitution

    assert _Substitution.applies(source)
    fast = _Substitution(source)
    for values in VALUES:
        assert fast.render(values) == _ENV.from_string(source).render(values)


def test_templates_with_other_jinja_syntax_are_left_to_jinja():
    from gramagents.templates import _Substitution

    for source in ("{% for o in options %}{{ o }}{% endfor %}", "{{ x | upper }}", "{# c #}x"):
        assert not _Substitution.applies(source)


def test_every_packaged_prompt_renders_the_same_with_and_without_the_fast_path():
    from gramagents import resources
    from gramagents.templates import _ENV, _Substitution

    root = resources.find("prompts", "raw.md").parent
    checked = 0
    for path in sorted(root.rglob("*.md")):
        prompt = load_prompt(str(path.relative_to(root)))
        if not isinstance(prompt.user, _Substitution):
            continue
        values = {name: f"<{name} 值>" for name in prompt.user.names}
        body = path.read_text(encoding="utf-8")
        if body.startswith("---\n"):
            body = body[body.find("\n---\n", 4) + 5 :]
        assert prompt.user.render(values) == _ENV.from_string(body).render(values)
        checked += 1
    assert checked >= 3  # the SINGLE prompts, the GEC prompts and raw.md


def test_missing_variable_in_a_fast_template_is_the_same_clear_error(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "mine.md").write_text("Say {{ word }}.\n", encoding="utf-8")
    with pytest.raises(GramagentsError, match="'word' is undefined"):
        load_prompt("mine.md").render({})


def test_turn_markers_make_a_conversation_of_worked_examples(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "turns.md").write_text(
        "---\nsystem: Answer T or F.\n---\n"
        "{% for shot in shots %}{{ shot.q }}\n[[assistant]]\n{{ shot.a }}\n[[user]]\n{% endfor %}"
        "{{ q }}\n"
    )
    template = load_prompt("turns.md")
    messages = template.render({"shots": [{"q": "1+1=2?", "a": "T"}, {"q": "2+2=5?", "a": "F"}],
                                "q": "3+3=6?"})  # fmt: skip
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Answer T or F."),
        ("user", "1+1=2?"), ("assistant", "T"),
        ("user", "2+2=5?"), ("assistant", "F"),
        ("user", "3+3=6?"),
    ]  # fmt: skip
    # without worked examples it is one user message, as a template without markers gives
    assert [m.role for m in template.render({"shots": [], "q": "x"})] == ["system", "user"]
    assert template.render_base({"shots": [], "q": "x"}) is None


def test_a_base_form_is_the_continuation_a_model_without_chat_template_reads(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "ask.md").write_text("---\nbase: ask.base.md\n---\nIs {{ s }} true?\n")
    (in_tmp / "prompts" / "ask.base.md").write_text("Sentence: {{ s }}\nAnswer: The answer is “\n")
    template = load_prompt("ask.md")
    assert template.render_base({"s": "x"}) == "Sentence: x\nAnswer: The answer is “"
    assert [m.content for m in template.render({"s": "x"})] == ["Is x true?"]
    # the hash covers both files: an edited continuation form is a different prompt
    (in_tmp / "prompts" / "ask.base.md").write_text("S: {{ s }}\nA: The answer is “\n")
    assert load_prompt("ask.md").hash != template.hash


def test_a_missing_base_form_names_the_field(in_tmp):
    (in_tmp / "prompts").mkdir()
    (in_tmp / "prompts" / "ask.md").write_text("---\nbase: nowhere.md\n---\nIs {{ s }} true?\n")
    with pytest.raises(InputError) as caught:
        load_prompt("ask.md")
    assert caught.value.field == "base" and "nowhere.md" in str(caught.value)


def test_a_request_without_a_base_form_keys_as_before():
    from gramagents.records import ChatRequest, Message

    plain = ChatRequest(messages=[Message(role="user", content="hi")])
    assert "base_prompt" not in plain.model_dump(mode="json")
    both = plain.model_copy(update={"base_prompt": "hi “"})
    assert both.model_dump(mode="json")["base_prompt"] == "hi “"
