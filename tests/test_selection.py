"""What an eval takes from a dataset before asking any model: the items in scope and tallies."""

from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.records import Item, PromptParts
from gramagents.sources.datasets import Dataset
from gramagents.templates import load_prompt
from gramagents.workflow.eval import select_items


def item(id_: str, task: str, template: str, answer=None, **meta) -> Item:
    return Item(id=id_, task=task, prompt=PromptParts(template=template), answer=answer, meta=meta)


def dataset(*items: Item) -> Dataset:
    return Dataset(
        path=Path("d.jsonl"),
        items=list(items),
        digest="x",
        lines={it.id: n for n, it in enumerate(items, 1)},
    )


def test_tallies_follow_rubrics_gold_answers_baselines_and_the_limit():
    selection = select_items(
        dataset(
            item("q1", "EDU-QG", "edu/open.md"),  # judged with its task's rubric
            item("q2", "EDU-QG", "edu/open.md", rubric="text-writing"),  # its own overrides it
            item(
                "t1", "EDU-TD", "edu/open.md", rubric="text-writing"
            ),  # so teaching-design is unused
            item("d1", "EDU-DIALOGUE", "edu/dialogue.md", answer="3"),
            item("d2", "EDU-DIALOGUE", "edu/dialogue.md"),  # no gold and not judged
            item("d3", "EDU-DIALOGUE", "edu/dialogue.md", rubric="text-writing"),  # judged
            item("m1", "EDU-MC", "edu/mc.md", answer="A", options={"A": 1, "B": 2, "C": 3, "D": 4}),
            item("m2", "EDU-MC", "edu/mc.md", answer="A", options={"A": 1, "B": 2}),
            item("m3", "EDU-MC", "edu/mc.md", answer="B", options=dict.fromkeys("ABCDEFGH", 1)),
            item("m4", "EDU-MC", "edu/mc.md", options={"A": 1}),  # past the limit: not counted
        ),
        limit=3,
    )
    assert [i.id for i in selection.items] == ["q1", "q2", "t1", "d1", "d2", "d3", "m1", "m2", "m3"]
    assert selection.per_task == {"EDU-QG": 2, "EDU-TD": 1, "EDU-DIALOGUE": 3, "EDU-MC": 3}
    assert selection.rubrics == ["question-generation", "text-writing"]
    assert selection.no_gold == {"EDU-DIALOGUE": 1}
    assert list(selection.templates) == ["edu/dialogue.md", "edu/mc.md", "edu/open.md"]
    assert all(t.hash == load_prompt(name).hash for name, t in selection.templates.items())
    assert selection.random_baselines["EDU-DIALOGUE"] == 1 / 9
    assert selection.random_baselines["EDU-MC"] == pytest.approx((1 / 4 + 1 / 2 + 1 / 8) / 3)
    assert "EDU-QG" not in selection.random_baselines  # judged tasks have no random baseline


def test_limit_keeps_the_first_items_of_each_task_in_dataset_order():
    items = [item(f"d{n}", "EDU-DIALOGUE", "edu/dialogue.md", answer="1") for n in range(4)]
    items.insert(2, item("m0", "EDU-MC", "edu/mc.md", answer="A", options={"A": 1, "B": 2}))
    selection = select_items(dataset(*items), limit=2)
    assert [i.id for i in selection.items] == ["d0", "d1", "m0"]
    assert selection.random_baselines == {"EDU-DIALOGUE": 1 / 9, "EDU-MC": 0.5}


def test_an_unknown_task_names_the_item_and_its_line():
    with pytest.raises(InputError) as caught:
        select_items(
            dataset(item("a", "EDU-MC", "edu/mc.md"), item("b", "NO-SUCH", "edu/mc.md")), None
        )
    message = str(caught.value)
    assert "NO-SUCH" in message and "'b'" in message and ":2" in message and "task" in message
