"""Grammar-book scoring: reading picked options, spBLEU against sacrebleu's command line, COMET."""

from __future__ import annotations

import importlib.machinery
import json
import math
import subprocess
import sys
import types
from pathlib import Path
from statistics import mean

import pytest

from gramagents.recipes.grammar_book import translation
from gramagents.recipes.grammar_book.comet import comet_scores
from gramagents.recipes.grammar_book.forge import Twin, difference
from gramagents.recipes.grammar_book.tasks import guess_rate
from gramagents.records import Item, PromptParts
from gramagents.scoring.extract import extract

OPTIONS = {"options": [{"key": k, "text": f"Option {k} is a long text"} for k in "ABCD"]}


@pytest.mark.parametrize(
    ("reply", "picked", "rule"),
    [
        ("B", ["B"], "exact"),
        ("A, C", ["A", "C"], "exact"),
        ("C and A.", ["A", "C"], "exact"),
        ("AC", ["A", "C"], "exact"),
        ("none", [], "none"),
        ("None of them.", [], "none"),
        ("The answer is B and D.", ["B", "D"], "labelled"),
        ("Answer: D", ["D"], "labelled"),
        ("B. Because it uses the dative.", ["B"], "leading"),
        ("It is 'Option C is a long text'.", ["C"], "option-text"),
        ("A sentence is missing here.", None, "invalid"),  # the article, not an option
        ("E", None, "invalid"),  # not an option
        ("A, A", None, "invalid"),
        ("", None, "invalid"),
    ],
)
def test_letter_set_reads_the_options_a_reply_picks(reply, picked, rule):
    result = extract("letter-set", reply, OPTIONS)
    assert (result.value, result.rule) == (picked, rule)


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ("De Hond schléift.", "De Hond schléift."),
        ('Translation: "De Hond schléift."\nThe dog sleeps.', "De Hond schléift."),
        ("```\nDe Hond schléift.\n```", "De Hond schléift."),
        ("   \n", None),
    ],
)
def test_a_translation_is_the_first_line_without_its_label(reply, text):
    assert extract("gb-translation", reply, {}).value == text


def test_the_random_baseline_counts_the_admissible_answers():
    def item(n, positives, base=True):
        return Item(id="x", task="GB-TASK2", prompt=PromptParts(template="t"),
                    meta={"n_options": n, "positives": positives, "base": base})  # fmt: skip

    assert guess_rate(item(2, [1, 1])) == 0.5  # Task 1 with two descriptions
    assert guess_rate(item(1, [0, 1])) == 0.5  # Task 2 with one sentence: it shows it or not
    assert guess_rate(item(4, [2, 2])) == 1 / 6  # Task 3: two of four points
    assert math.isnan(guess_rate(item(4, [2, 2], base=False)))  # the headline is the base's


@pytest.mark.parametrize(
    ("twin", "problem"),
    [
        ("De Hond schlofen am Gaart.", None),  # one word
        ("De Hond am Gaart.", None),  # one word left out
        ("De Hond schléift am Gaart.", "unchanged"),
        ("Den Hond schléift am Gaarden.", "differ over 5 words"),  # two places, far apart
    ],
)
def test_a_twin_differs_from_its_sentence_in_one_place(twin, problem):
    context = {"sentence": "De Hond schléift am Gaart.", "max_changed_words": 3}
    answer = json.dumps({"ungrammatical": twin, "change": "x"})
    if problem is None:
        assert Twin.model_validate_json(answer, context=context).ungrammatical == twin
    else:
        with pytest.raises(ValueError, match=problem):
            Twin.model_validate_json(answer, context=context)
    assert difference("a b c d", "a x c d") == (["b"], ["x"])


HYPOTHESES = ["De Hond schléift am Gaart.", "Mir ginn muer an d'Stad.", "Hatt liest e Buch."]
REFERENCES = ["De Hond schléift am Gaart.", "Muer ginn mir an d'Stad.", "Hatt huet e Buch."]


@pytest.fixture
def flores_home(tmp_path, monkeypatch):
    """A sacrebleu home holding a SentencePiece model under the FLORES-200 file name.

    The real model cannot be downloaded here; one trained on a few sentences stands in for it,
    which is enough to check that spBLEU is BLEU over that segmentation, as the CLI computes it.
    """
    import sentencepiece
    from sacrebleu.tokenizers import tokenizer_spm

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join((HYPOTHESES + REFERENCES) * 20) + "\n", encoding="utf-8")
    home = tmp_path / "sacrebleu"
    (home / "models").mkdir(parents=True)
    sentencepiece.SentencePieceTrainer.train(
        input=str(corpus), model_prefix=str(tmp_path / "spm"), vocab_size=30,
        model_type="unigram", minloglevel=2,
    )  # fmt: skip
    (tmp_path / "spm.model").rename(home / "models" / translation.SPM_FILE)
    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(home))
    translation._metric.cache_clear()
    yield home
    translation._metric.cache_clear()


def test_spbleu_is_computed_when_the_flores_model_is_there_and_matches_the_cli(flores_home):
    assert translation.spbleu_status()[0]
    scores = translation.corpus_scores(HYPOTHESES, REFERENCES)
    assert set(scores) == {"spbleu", "bleu", "chrf++"}
    ref, hyp = flores_home / "ref.txt", flores_home / "hyp.txt"
    ref.write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(HYPOTHESES) + "\n", encoding="utf-8")
    cli = Path(sys.executable).parent / "sacrebleu"
    out = subprocess.run(
        [str(cli), str(ref), "-i", str(hyp), "-m", "bleu", "-tok", "flores200", "-b", "-w", "4"],
        capture_output=True, text=True, check=True, env={"SACREBLEU": str(flores_home)},
    ).stdout  # fmt: skip
    assert float(out) == round(scores["spbleu"], 4)
    assert scores["spbleu"] != scores["bleu"]  # another segmentation, another score
    assert "tok:flores200" in translation.signatures()["spbleu"]


def test_without_the_flores_model_spbleu_is_reported_missing_and_the_rest_computed(
    tmp_path, monkeypatch
):
    from sacrebleu.tokenizers import tokenizer_spm

    monkeypatch.setattr(tokenizer_spm, "SACREBLEU_DIR", str(tmp_path))
    translation._metric.cache_clear()
    available, why = translation.spbleu_status()
    assert not available and str(tmp_path / "models" / translation.SPM_FILE) in why
    assert set(translation.corpus_scores(HYPOTHESES, REFERENCES)) == {"bleu", "chrf++"}
    assert not (tmp_path / "models").exists()  # nothing was downloaded


def test_comet_runs_only_with_the_package_and_a_checkpoint(tmp_path, monkeypatch):
    pairs = zip(HYPOTHESES, REFERENCES, strict=True)
    rows = [{"src": "The dog sleeps.", "mt": h, "ref": r} for h, r in pairs]
    groups = {("model-a", "into"): rows, ("model-b", "into"): rows[::-1]}
    cache = tmp_path / "comet.json"
    monkeypatch.delenv("GRAMAGENTS_COMET_MODEL", raising=False)
    assert comet_scores(groups, cache) == ({}, "not computed: set GRAMAGENTS_COMET_MODEL to "
                                                "a COMET checkpoint to add it")  # fmt: skip
    checkpoint = tmp_path / "model" / "checkpoints" / "model.ckpt"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_bytes(b"weights")
    monkeypatch.setenv("GRAMAGENTS_COMET_MODEL", str(tmp_path / "model"))
    loaded = []

    def share(row):
        return sum(a == b for a, b in zip(row["mt"], row["ref"], strict=False)) / len(row["ref"])

    class Model:  # a stand-in for unbabel-comet's model: the share of matching characters
        def predict(self, data, batch_size, gpus, progress_bar):
            scores = [share(d) for d in data]
            return types.SimpleNamespace(scores=scores, system_score=sum(scores) / len(scores))

    def load_from_checkpoint(path):
        loaded.append(path)
        return Model()

    fake = types.ModuleType("comet")
    fake.load_from_checkpoint = load_from_checkpoint
    fake.__spec__ = importlib.machinery.ModuleSpec("comet", None)
    monkeypatch.setitem(sys.modules, "comet", fake)
    scores, status = comet_scores(groups, cache)
    # one load for both groups
    assert status == f"COMET checkpoint {checkpoint}" and loaded == [str(checkpoint)]
    assert scores[("model-a", "into")]["mean"] == pytest.approx(mean(share(r) for r in rows))
    assert 0 < scores[("model-a", "into")]["mean"] < 1
    again, _ = comet_scores(groups, cache)  # from the run folder's cache: not loaded again
    assert again == scores and loaded == [str(checkpoint)]
