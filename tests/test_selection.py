"""What an eval takes from a dataset before asking any model: the items in scope and tallies.

`--limit N` samples N questions per task (workflow/selection.py): seeded, spread over the
task's categories and source files, a question's items taken together, and the same questions
for tasks that share them.
"""

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from gramagents.errors import InputError
from gramagents.records import Item, PromptParts
from gramagents.sources.datasets import Dataset, read_items
from gramagents.templates import load_prompt
from gramagents.workflow.eval import select_items
from gramagents.workflow.selection import Sampler, question_of


def item(id_: str, task: str, template: str, answer=None, **meta) -> Item:
    prompt = PromptParts(template=template, vars={"text": id_})
    return Item(id=id_, task=task, prompt=prompt, answer=answer, meta=meta)


def dataset(*items: Item) -> Dataset:
    return Dataset(
        path=Path("d.jsonl"),
        items=list(items),
        digest="x",
        lines={it.id: n for n, it in enumerate(items, 1)},
    )


def test_tallies_follow_rubrics_gold_answers_and_baselines():
    selection = select_items(
        dataset(
            item("q1", "EDU-QG", "edu/open.md"),  # judged with its task's rubric
            item("q2", "EDU-QG", "edu/open.md", rubric="text-writing"),  # its own overrides it
            item("t1", "EDU-TD", "edu/open.md", rubric="text-writing"),  # teaching-design unused
            item("d1", "EDU-DIALOGUE", "edu/dialogue.md", answer="3"),
            item("d2", "EDU-DIALOGUE", "edu/dialogue.md"),  # no gold and not judged
            item("d3", "EDU-DIALOGUE", "edu/dialogue.md", rubric="text-writing"),  # judged
            item("m1", "EDU-MC", "edu/mc.md", answer="A", options={"A": 1, "B": 2, "C": 3, "D": 4}),
            item("m2", "EDU-MC", "edu/mc.md", answer="A", options={"A": 1, "B": 2}),
            item("m3", "EDU-MC", "edu/mc.md", answer="B", options=dict.fromkeys("ABCDEFGH", 1)),
        ),
        limit=None,
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
    assert selection.sampling is None


def cpg(n: int, category: str, source: str = "table.csv") -> Item:
    return item(f"{category}/{source}/{n}", "SINGLE-T", "raw.md", "T", category=category,
                source=f"{source}:{n + 2}")  # fmt: skip


def test_limit_spreads_over_categories_and_counts_only_what_it_keeps():
    items = [cpg(n, c) for c in ("A", "B", "C", "D") for n in range(25)]
    selection = select_items(dataset(*items), limit=8, seed=7)
    assert Counter(i.meta["category"] for i in selection.items) == dict.fromkeys("ABCD", 2)
    assert selection.per_task == {"SINGLE-T": 8}
    assert selection.sampling == {
        "limit": 8, "seed": 7, "unit": "question", "method": selection.sampling["method"]
    }  # fmt: skip
    order = [items.index(i) for i in selection.items]
    assert order == sorted(order)  # in dataset order


def test_within_a_category_the_sample_spreads_over_source_files():
    items = [cpg(n, "A", f"file-{f}.csv") for f in range(3) for n in range(20)]
    chosen = select_items(dataset(*items), limit=6, seed=1).items
    assert Counter(i.meta["source"].split(":")[0] for i in chosen) == {
        "file-0.csv": 2, "file-1.csv": 2, "file-2.csv": 2
    }  # fmt: skip


def test_the_sample_follows_the_seed_not_the_order_of_the_lines():
    items = [cpg(n, c) for c in ("A", "B") for n in range(40)]
    first = {i.id for i in select_items(dataset(*items), limit=6, seed=3).items}
    shuffled = items[:]
    random.Random(0).shuffle(shuffled)
    assert {i.id for i in select_items(dataset(*shuffled), limit=6, seed=3).items} == first
    others = [{i.id for i in select_items(dataset(*items), limit=6, seed=s).items} for s in (4, 5)]
    assert first not in others
    ids = [i.id for i in items]
    assert [i.id for i in select_items(dataset(*items), limit=6, seed=3).items] != ids[:6]


def syntax(question: str, point: str) -> list[Item]:
    """A test question asked zero-shot and under three few-shot seeds."""
    meta = {"point": point, "tree": f"news-01.mrg#{question}", "question": question}
    zero = item(question, "SYNTAX-TF", "syntax/tf.md", "T", **meta)
    few = [
        item(f"{question}@s{s}", "SYNTAX-TF-FEWSHOT", "syntax/tf.md", "T", seed=s, **meta)
        for s in (1, 2, 3)
    ]
    return [zero, *few]


def test_zero_and_few_shot_items_of_a_question_are_taken_together_and_alike():
    items = [x for n in range(30) for x in syntax(f"q{n}", ("GS", "DO", "SC")[n % 3])]
    selection = select_items(dataset(*items), limit=6, seed=11)
    zero = [i for i in selection.items if i.task == "SYNTAX-TF"]
    few = [i for i in selection.items if i.task == "SYNTAX-TF-FEWSHOT"]
    assert len(zero) == 6 and len(few) == 18  # a question counts once: its three seeds with it
    assert {question_of(i) for i in few} == {i.id for i in zero}
    assert Counter(i.meta["seed"] for i in few) == {1: 6, 2: 6, 3: 6}
    assert Counter(i.meta["point"] for i in zero) == {"GS": 2, "DO": 2, "SC": 2}
    assert selection.per_task == {"SYNTAX-TF": 6, "SYNTAX-TF-FEWSHOT": 18}


def test_without_meta_question_each_item_is_its_own_question():
    few = [
        item(f"q{n}@s{s}", "SYNTAX-TF-FEWSHOT", "syntax/tf.md", "T", point="GS")
        for n in range(5)
        for s in (1, 2, 3)
    ]
    assert len(select_items(dataset(*few), limit=4, seed=0).items) == 4


def test_the_sampler_keeps_at_most_the_limit_of_questions_per_category_and_file():
    sampler = Sampler(limit=3, seed=5)
    spec = select_items(dataset(cpg(0, "A")), None).tasks["SINGLE-T"]
    for n in range(2000):
        sampler.offer((n, n + 1, cpg(n, "ABCD"[n % 4], f"f{n // 4 % 2}.csv")), spec)
    strata = sampler._strata["SINGLE-T"]
    assert len(strata) == 8 and all(len(s.questions) == 3 for s in strata.values())
    assert len(sampler.chosen()) == 3


def write_lines(path: Path, items: list[Item], extra: str = "") -> Path:
    text = "".join(i.model_dump_json() + "\n" for i in items) + extra
    path.write_text(text, encoding="utf-8")
    return path


def test_a_streamed_file_is_checked_whole_and_its_repeats_are_dropped(tmp_path):
    items = [cpg(n, c) for c in ("A", "B") for n in range(10)]
    path = write_lines(tmp_path / "d.jsonl", [*items, items[3]])  # an identical repeat
    streamed = read_items(path)
    selection = select_items(streamed, limit=100, seed=1)
    assert [i.id for i in selection.items] == [i.id for i in items]
    assert [(d["id"], d["line"]) for d in streamed.duplicates] == [(items[3].id, 21)]
    assert streamed.digest == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    assert streamed.lines == {i.id: n for n, i in enumerate(items, 1)}
    changed = items[5].model_copy(update={"answer": "F"})
    write_lines(path, [*items, changed])
    with pytest.raises(InputError) as caught:
        select_items(read_items(path), limit=2, seed=1)
    assert caught.value.line == 21 and "first on line 6" in str(caught.value)
    write_lines(path, items, extra='{"id": "late", "task": "SINGLE-T"}\n')
    with pytest.raises(InputError) as caught:  # the last line is checked though none is kept
        select_items(read_items(path), limit=1, seed=1)
    assert (caught.value.line, caught.value.field) == (21, "prompt")


def test_an_unknown_task_names_the_item_and_its_line():
    with pytest.raises(InputError) as caught:
        select_items(
            dataset(item("a", "EDU-MC", "edu/mc.md"), item("b", "NO-SUCH", "edu/mc.md")), None
        )
    message = str(caught.value)
    assert "NO-SUCH" in message and "'b'" in message and ":2" in message and "task" in message


@pytest.mark.parametrize(
    "template", ["/etc/hostname", "../../.env", "cpg/../../../x.md", "prompts/../../x.md"]
)
def test_a_template_outside_the_prompt_folders_is_refused_with_its_line(template, tmp_path):
    items = [cpg(0, "A"), item("evil", "SINGLE-T", template, "T")]
    path = write_lines(tmp_path / "d.jsonl", items)
    with pytest.raises(InputError) as caught:
        select_items(read_items(path), limit=None)
    error = caught.value
    assert (error.line, error.field) == (2, "prompt.template")
    assert "refused" in str(error) or "outside" in str(error) or "'..'" in str(error)


def test_the_eval_manifest_states_the_sampling(tmp_path):
    import asyncio

    from gramagents.models.scripted import ScriptedBackend
    from gramagents.workflow.eval import EvalOptions, run_eval

    ScriptedBackend.register("sel-t", lambda request: "T")
    path = write_lines(tmp_path / "d.jsonl", [cpg(n, c) for c in "AB" for n in range(6)])
    options = EvalOptions(
        models=["scripted:sel-t"], run_dir=tmp_path / "run", limit=4, seed=9, view=False
    )
    result = asyncio.run(run_eval(path, options))
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (
        manifest["dataset"]["sample"]["limit"] == 4 and manifest["dataset"]["sample"]["seed"] == 9
    )
    assert result.manifest.counts.items == 4
    assert "sampled: at most 4 questions per task, seed 9" in result.report_path.read_text()
