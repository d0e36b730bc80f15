"""Minimal pairs scored by log-likelihood: BLiMP and CLiMP files, checked against transformers."""

import asyncio
import json

import pytest
import torch

from gramagents.errors import InputError, RunError
from gramagents.sources.datasets import read_dataset
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT

BLIMP = ROOT / "examples" / "minimal-pairs" / "blimp"
CLIMP = ROOT / "examples" / "minimal-pairs" / "climp"


def test_blimp_files_become_pairs_with_their_paradigm():
    dataset = read_dataset(BLIMP, "blimp")
    assert len(dataset.items) == 20
    item = dataset.items[0]
    assert item.task == "BLIMP" and item.answer == "good"
    assert set(item.prompt.vars) == {"good", "bad"}
    assert {i.meta["UID"] for i in dataset.items} == {
        "determiner_noun_agreement_1",
        "regular_plural_subject_verb_agreement_1",
    }


def test_a_blimp_folder_is_read_as_the_zip_unpacks_it(tmp_path):
    # BLiMP.zip unpacks to data/, with the paradigm files inside; dot files are skipped.
    data = tmp_path / "blimp" / "data"
    data.mkdir(parents=True)
    for source in sorted(BLIMP.glob("*.jsonl")):
        (data / source.name).write_bytes(source.read_bytes())
    (data / ".hidden.jsonl").write_text("not json\n", encoding="utf-8")
    dataset = read_dataset(tmp_path / "blimp", "blimp")
    assert [i.id for i in dataset.items] == [i.id for i in read_dataset(BLIMP, "blimp").items]
    assert dataset.info["pair_files"] == [
        {"file": "data/determiner_noun_agreement_1.jsonl", "pairs": 10},
        {"file": "data/regular_plural_subject_verb_agreement_1.jsonl", "pairs": 10},
    ]


def test_climp_files_pair_consecutive_rows_in_each_layout():
    dataset = read_dataset(CLIMP, "climp")
    by_file: dict[str, list] = {}
    for item in dataset.items:
        by_file.setdefault(item.meta["source_file"], []).append(item)
    assert len(by_file["ba_construction.csv"]) == 8 and len(by_file["classifier.csv"]) == 6
    assert len(by_file["anaphor_agreement_gender.csv"]) == 5  # the released `,0,1,2,3` layout
    second = by_file["ba_construction.csv"][1]  # written bad-first in the file
    assert second.prompt.vars == {"good": "他把门关上了。", "bad": "他把门关。"}
    assert by_file["classifier.csv"][0].prompt.vars == {
        "good": "我买了一本书。",
        "bad": "我买了一条书。",
    }
    assert by_file["classifier.csv"][0].meta["phenomenon"] == "classifier"


@pytest.mark.parametrize(
    ("name", "text", "fmt", "line", "field", "words"),
    [
        (
            "p.jsonl",
            '{"sentence_good": "A.", "sentence_bad": "B."}\n{"sentence_good": "C."}\n',
            "blimp",
            2,
            "sentence_bad",
            "missing",
        ),
        (
            "p.csv",
            "index,phenomenon,paradigm,sentence,label\n0,x,y,A.,1\n1,x,y,B.,1\n",
            "climp",
            3,
            "label",
            "one row labelled 1",
        ),
        (
            "q.csv",
            "index,phenomenon,paradigm,sentence,label\n0,x,y,A.,yes\n",
            "climp",
            2,
            "label",
            "must be 1",
        ),
        ("r.csv", "A.\nB.\nC.\n", "climp", 3, "sentence", "odd number"),
    ],
)
def test_bad_minimal_pair_files_name_line_and_field(tmp_path, name, text, fmt, line, field, words):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dataset(path, fmt)
    assert (caught.value.line, caught.value.field) == (line, field)
    assert words in str(caught.value)


def summed_logprob(tokenizer, model, sentence: str) -> float:
    """The sentence's log-probability after the BOS token, tokenized as it is given."""
    ids = [tokenizer.bos_token_id, *tokenizer(sentence, add_special_tokens=False).input_ids]
    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0, :-1].float()
    scores = torch.log_softmax(logits, dim=-1)
    return float(scores.gather(1, torch.tensor(ids[1:]).unsqueeze(1)).sum())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "fmt", "tables", "use_cache", "space"),
    [
        # BLiMP by default scores each sentence after a space, CLiMP as it is
        (BLIMP, "blimp", ("UID", "linguistics_term"), True, " "),
        # without the cache the chunks render their own pairs (eval_graph.plan)
        (CLIMP, "climp", ("phenomenon", "paradigm"), False, ""),
    ],
)
def test_every_decision_matches_a_direct_transformers_computation(
    tmp_path, path, fmt, tables, use_cache, space
):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gramagents.models.embedded import GGUF_FILE, embedded_folder
    from gramagents.models.hf_load import converted_gguf_folder

    spec = "smollm2?dtype=float32"
    result = asyncio.run(
        run_eval(
            path,
            EvalOptions(models=[spec], fmt=fmt, run_dir=tmp_path / "run", use_cache=use_cache),
        )
    )
    assert result.manifest.status == "complete"
    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    items = {i.id: i for i in read_dataset(path, fmt).items}
    responses = [
        json.loads(x) for x in (tmp_path / "run" / "responses.jsonl").read_text().splitlines()
    ]
    assert len(responses) == len(items)
    for response in responses:
        pair = items[response["item_id"]].prompt.vars
        good = summed_logprob(tokenizer, model, space + pair["good"])
        bad = summed_logprob(tokenizer, model, space + pair["bad"])
        assert response["logprobs"]["good"] == pytest.approx(good, abs=1e-3)
        assert response["logprobs"]["bad"] == pytest.approx(bad, abs=1e-3)
        assert response["extracted"] == ("good" if good > bad else "bad")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [r["metric"] for r in summary] == ["acc", "acc_mean"]
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    for key in tables:
        assert f"## Scores by {key}" in report
    how = "spaced" if space else "bare"
    assert f"minimal pairs scored with conditioning {fmt.upper()} `{how}`" in report
    assert result.manifest.conditioning == {fmt.upper(): how}
    # the run folder holds pairs scored one way: it is not resumed the other way
    other = "bare" if space else "spaced"
    with pytest.raises(RunError, match=f"conditioning/{fmt.upper()} \\({how} -> {other}\\)"):
        asyncio.run(
            run_eval(
                path,
                EvalOptions(models=[spec], fmt=fmt, run_dir=tmp_path / "run", conditioning=other),
            )
        )
    if fmt == "climp":  # how each file was read, the pair order of bare sentences with it
        layout = "sentences only, a pair on consecutive lines, grammatical first"
        assert f"| classifier.csv | {layout} | 6 |" in report
