"""The grammar-book recipe end to end with scripted agents: every stage's keep/discard, exactly.

The book is the test PDF (four pages of text and a ruled table, and a fifth, image-only page
that is skipped without OCR). The scripted agents answer each window, point and sentence as
the comments below say, so that every stage keeps, merges, re-asks, rejects and fails
something known in advance. Two points share a sentence, a third point also applies to the
sentences that begin "Muer ginn mir" (verb second), and one twin is grammatical after all: the
banks must offer none of these as a wrong option. A translation set in FLORES-200's layout is
translated beside the generated pairs.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from statistics import mean, stdev

import pytest

from gramagents.models.scripted import ScriptedBackend
from gramagents.recipes.grammar_book import reader as book_reader
from gramagents.recipes.grammar_book.report import translation_stem
from gramagents.records import ChatRequest
from gramagents.workflow.build import BuildOptions, import_review, run_build
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT
from .grammar_books import write_pdf

RECIPE = (
    (ROOT / "graphs" / "grammar-book.yaml")
    .read_text(encoding="utf-8")
    .replace("{window: 4, stride: 2, row_context: 2}", "{window: 2, stride: 1, row_context: 2}")
)
FLORES = [  # (English, Luxembourgish), written for the test in FLORES-200's layout
    ("The weather is fine today.", "D'Wieder ass haut schéin."),
    ("My brother lives in the north of the country.", "Mäi Brudder wunnt am Norde vum Land."),
    ("We eat together at noon.", "Mir iessen um Mëtteg zesummen."),
]
FRENCH = ["Il fait beau aujourd'hui.", "Mon frère habite au nord du pays.", "Nous mangeons à midi."]
WORD = {
    "Definite article agreement": "den Hond",
    "Case forms of the definite article": "dem Mann",
    "Plural in -en": "d'Stuffen",
    "Verb-second word order": "muer",
    "Verb-final subordinate clauses": "datt",
}
SHAPES = {
    1: "De Mann gesäit {w} all Dag an der Stad.",
    2: "Muer ginn mir mat de Kanner an de Bësch, sot {w}.",
    3: "Hatt huet gëschter e laange Bréif iwwer {w} geschriwwen.",
}
V2 = "In main clauses the finite verb stands in second position."


def sentence(name: str, k: int) -> str:
    return SHAPES[k].format(w=WORD[name])


SHARED = ("Verb-final subordinate clauses", 3)
"""This pair's sentence is written as the definite-article point's third sentence."""
GRAMMATICAL_TWIN_OF = sentence("Plural in -en", 2)


def written(name: str, k: int) -> str:
    """The sentence the generator writes for pair `k` of a point."""
    return sentence("Definite article agreement", 3) if (name, k) == SHARED else sentence(name, k)


def truth(text: str) -> set[str]:
    """Every point a sentence uses: those it was written for, and verb second after "Muer"."""
    names = {n for n in WORD for k in SHAPES if written(n, k) == text}
    return names | ({"Verb-second word order"} if text.startswith("Muer ginn mir") else set())


def english(name: str, k: int) -> str:
    return f"Sentence {k} about {WORD[name]}."


def _point(name, category, description, examples, pages):
    return {"name": name, "category": category, "description": description,
            "examples": examples, "source_pages": pages}  # fmt: skip


def extract(prompt: str, attempt: int) -> str:
    if "Table row: Case: Nominative" in prompt:
        points = [
            _point(
                "Case forms of the definite article",
                "morphology",
                "Masculine nouns take den in the nominative.",
                ["den Hond"],
                [2],
            )
        ]
    elif "Table row: Case: Dative" in prompt:  # the same point again (merged by its name);
        points = [
            _point(
                "case forms of the definite article",
                "morphology",  # an example
                "Masculine nouns take dem in the dative case.",  # not in the text
                ["dem Hond", "invented example"],
                [2],
            )
        ]
    elif "agrees with the noun" in prompt:
        points = [
            _point(
                "Definite article agreement",
                "morphology",
                "The definite article agrees with the noun in gender and case.",
                ["den", "not in the text"],
                [2],
            )
        ]
    elif "forms of the table" in prompt:
        points = []  # a window that explains no point
    elif "ending -en" in prompt:  # a page outside the window first: sent back
        points = [
            _point(
                "Plural in -en",
                "morphology",
                "Many nouns form their plural with the ending -en.",
                ["Stuffen"],
                [7] if attempt == 0 else [3],
            )
        ]
    elif "vowel instead" in prompt:
        return "I cannot answer that."  # never valid: a failure
    elif "subordinate" in prompt:  # V2 again (merged by its description), and verb-final
        points = [
            _point("Verb second in main clauses", "syntax", V2, [], [3, 4]),
            _point(
                "Verb-final subordinate clauses",
                "syntax",
                "In subordinate clauses the finite verb goes to the end.",
                ["Ech weess, datt hatt muer kënnt"],
                [4],
            ),
        ]
    elif "second position" in prompt:
        points = [
            _point("Verb-second word order", "syntax", V2, ["Muer ginn ech an d'Schoul"], [3])
        ]
    else:
        raise AssertionError(f"unexpected window: {prompt[:200]}")
    return json.dumps({"points": points})


def generate(prompt: str, attempt: int) -> str:
    name = re.search(r"\((?:morphology|syntax)\): (.+)", prompt).group(1)
    k = int(re.search(r"sentence pair number (\d)", prompt).group(1))
    if name == "Plural in -en" and k == 3:  # too long, every time: a failure
        return json.dumps({"sentence": " ".join(["Wuert"] * 40) + ".", "english": "Long."})
    if name == "Definite article agreement" and k == 2 and attempt == 0:  # not translated
        return json.dumps({"sentence": "Sentence 2 about den Hond.", "english": english(name, 2)})
    if name == "Verb-final subordinate clauses" and k == 2:  # a duplicate of pair 1
        k = 1
    return json.dumps({"sentence": written(name, k), "english": english(name, k)})


def backcheck(prompt: str, attempt: int) -> str:
    said = re.search(r"Luxembourgish sentence: (.+)", prompt).group(1)
    name = re.search(r"Grammar point of Luxembourgish: (.+)", prompt).group(1)
    verdict = {"grammatical": True, "instantiates_point": True, "translation_quality": 8,
               "reason": "It uses the point."}  # fmt: skip
    if not truth(said):  # a twin: ungrammatical, but one
        twin_of = said.replace(" x", " ", 1)
        verdict.update(grammatical=twin_of == GRAMMATICAL_TWIN_OF, reason="The twin.")
    elif name not in truth(said):  # another point than the sentence's: it does not apply
        verdict.update(instantiates_point=False, reason="Another point.")
    elif said == sentence("Case forms of the definite article", 3):
        verdict.update(grammatical=False, reason="The article is wrong.")
    elif said == sentence("Verb-second word order", 1):
        verdict.update(translation_quality=3, reason="The translation is loose.")
    elif said == sentence("Verb-second word order", 2):
        return '{"grammatical": "maybe"}'  # never valid: a failure
    return json.dumps(verdict)


def twin(prompt: str, attempt: int) -> str:
    said = re.search(r"Luxembourgish sentence: (.+)", prompt).group(1)
    words = said.split()
    if said == sentence("Definite article agreement", 1):  # two places: sent back, then fails
        changed = ["Den", *words[1:-1], "Stadt."]
    elif said == sentence("Plural in -en", 1) and attempt == 0:  # unchanged: sent back
        changed = words
    else:
        changed = [words[0], "x" + words[1], *words[2:]]
    return json.dumps({"ungrammatical": " ".join(changed), "change": "one word"})


def agents(request: ChatRequest) -> str:
    users = [m.content for m in request.messages if m.role == "user"]
    prompt, attempt = users[0], sum(m.role == "assistant" for m in request.messages)
    for marker, answer in (
        ("List the grammar points", extract),
        ("Write sentence pair number", generate),
        ("Judge the pair", backcheck),
        ("ungrammatical counterpart", twin),
    ):
        if marker in prompt:
            return answer(prompt, attempt)
    raise AssertionError(f"unexpected prompt: {prompt[:200]}")


ScriptedBackend.register("grammar-book-agents", agents)


def write_flores(root: Path) -> Path:
    """A set in FLORES-200's layout: a file per language, a sentence per line, in devtest/."""
    split = root / "devtest"
    split.mkdir(parents=True)
    files = {"eng_Latn": [e for e, _ in FLORES], "ltz_Latn": [lb for _, lb in FLORES],
             "fra_Latn": FRENCH}  # fmt: skip
    for code, lines in files.items():
        (split / f"{code}.devtest").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grammar-book")
    flores = write_flores(folder / "flores200_dataset")
    sets = f"sets: [{{name: FLORES200, path: '{flores}', split: devtest, target: ltz_Latn}}]"
    recipe = RECIPE.replace(
        "GB-TRANSLATE: {direction: into}", f"GB-TRANSLATE: {{direction: into, {sets}}}"
    )
    assert recipe != RECIPE
    (folder / "recipe.yaml").write_text(recipe, encoding="utf-8")
    book = write_pdf(folder / "book.pdf", scanned_page=True)
    with pytest.MonkeyPatch.context() as patch:  # a machine without Tesseract
        patch.setattr(book_reader, "find_engine", lambda languages: (None, "not installed"))
        patch.setenv("GRAMAGENTS_CACHE", str(folder / "cache.sqlite"))
        result = asyncio.run(
            run_build(
                str(folder / "recipe.yaml"),
                BuildOptions(source=book, agent_model="scripted:grammar-book-agents",
                             run_dir=folder / "build"),
            )
        )  # fmt: skip
    return result


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_stage_keeps_and_discards_what_it_should(built):
    stages = built.manifest.stages
    assert stages["read"] == {"pages": 5, "ocr_pages": 0, "skipped_pages": 1, "paragraphs": 6,
                              "tables": 1, "table_rows": 2, "sections": 4}  # fmt: skip
    assert stages["sections"] == {"before": 4, "kept": 3, "dropped": 1, "undecided": 0}
    assert stages["classify"] == {"planned": 0, "kept": 0, "dropped": 0, "failed": 0}
    assert stages["windows"] == {"sections": 3, "text_windows": 6, "table_rows": 2}
    assert stages["extract"] == {"planned": 8, "points": 6, "none": 1, "failed": 1}
    assert stages["merge"] == {"before": 7, "kept": 5, "merged": 2}
    assert stages["generate"] == {"planned": 15, "generated": 14, "failed": 1}
    assert stages["dedup"] == {"before": 14, "kept": 13, "removed": 1}
    assert stages["backcheck"] == {"planned": 13, "accepted": 10, "rejected": 2, "failed": 1}
    assert stages["twins"] == {"planned": 10, "made": 9, "failed": 1}
    # two other points per accepted sentence, and every twin: verb second applies to the three
    # accepted "Muer ginn mir" sentences; the shared sentence's two points each apply to the
    # other's copy; one twin is grammatical
    assert stages["distractors"] == {"planned": 10 * 2 + 9, "clear": 15, "applies": 5,
                                     "twin_wrong": 8, "twin_grammatical": 1,
                                     "failed": 0}  # fmt: skip
    assert built.manifest.tasks == {"GB-TASK1": 60, "GB-TASK2": 67, "GB-TASK3": 27,
                                    "GB-TASK4": 8 * 3, "GB-TRANSLATE": 10 + 3}  # fmt: skip
    banks = stages["banks"]
    assert banks["items"] == 191 and banks["pairs_dropped"] == 1
    # every drawn distractor that applies is replaced, or its item is left out
    assert banks["distractors_dropped"] == banks["distractors_replaced"] + banks["items_left_out"]
    assert banks["distractors_replaced"] > 0 and banks["items_left_out"] > 0
    failures = Counter(f["stage"] for f in lines(built.folder.file("failures.jsonl")))
    assert failures == {"sections": 1, "extract": 1, "merge": 2, "generate": 1, "dedup": 1,
                        "backcheck": 1, "twins": 1}  # fmt: skip
    assert built.manifest.counts.failed == 4  # what the agents could not make or judge


def test_points_come_from_prose_and_table_rows_each_with_its_pages(built):
    points = {p["name"]: p for p in lines(built.folder.file("points.jsonl"))}
    assert {n: (p["origins"], p["pages"]) for n, p in points.items()} == {
        "Definite article agreement": (["text"], [2]),
        "Case forms of the definite article": (["table-row"], [2]),
        "Plural in -en": (["text"], [3]),
        "Verb-second word order": (["text"], [3, 4]),
        "Verb-final subordinate clauses": (["text"], [4]),
    }
    table = points["Case forms of the definite article"]
    assert table["windows"] == ["s2/t1/r1", "s2/t1/r2"] and table["merged"] == ["s2/t1/r2/p1"]
    assert table["examples"] == ["den Hond", "dem Hond"]  # the invented one is left out
    assert points["Definite article agreement"]["examples"] == ["den"]
    assert points["Verb-second word order"]["merged"] == ["s4/w2/p1"]
    assert {p["language"] for p in points.values()} == {"lb"}


def test_rejected_and_failed_sentences_keep_their_verdicts_and_stay_out(built):
    instances = {i["id"]: i for i in lines(built.folder.file("instances.jsonl"))}
    examples = {k: v for k, v in instances.items() if v["kind"] == "example"}
    status = Counter(v["status"] for v in examples.values())
    assert status == {"accepted": 10, "rejected": 2, "failed": 1}
    rejected = [v for v in examples.values() if v["status"] == "rejected"]
    verdicts = sorted(v["provenance"]["checks"][0]["details"]["translation_quality"]
                      for v in rejected)  # fmt: skip
    assert verdicts == [3, 8]  # a loose translation; an ungrammatical sentence
    twins = [v for v in instances.values() if v["kind"] == "pair"]
    assert len(twins) == 9
    for pair in twins:
        source = instances[pair["annotations"]["sentence_id"]]
        assert (
            source["status"] == "accepted" and pair["annotations"]["correction"] == source["text"]
        )
        assert pair["annotations"]["difference"]["twin"].startswith("x")
    used = {i["prompt"]["vars"]["sentence"] for i in lines(built.dataset_path)
            if i["task"] == "GB-TASK1"}  # fmt: skip
    assert used == {v["text"] for v in examples.values() if v["status"] == "accepted"}


def test_the_banks_ask_what_the_points_and_pairs_say(built):
    instances = {i["id"]: i for i in lines(built.folder.file("instances.jsonl"))}
    points = {p["id"]: p for p in lines(built.folder.file("points.jsonl"))}
    texts_of: dict[str, set[str]] = {}
    for v in instances.values():
        if v["kind"] == "example" and v["status"] == "accepted":
            texts_of.setdefault(v["point_id"], set()).add(v["text"])
    items = lines(built.dataset_path)
    seeds = Counter(
        (i["task"], i["meta"].get("seed")) for i in items if i["task"] != "GB-TRANSLATE"
    )
    assert {s for _, s in seeds} == {0, 1, 2}
    for item in items:
        options = {o["key"]: o["text"] for o in item["prompt"]["vars"].get("options", [])}
        if item["task"] == "GB-TASK1":
            [key] = item["answer"]
            point = points[instances[item["meta"]["sentence"]]["point_id"]]
            assert options[key] == f"{point['name']}: {point['description']}"
        elif item["task"] == "GB-TASK2":
            own = texts_of[item["meta"]["point"]]
            shown = {k for k, text in options.items() if text in own}
            assert set(item["answer"]) == shown and len(shown) <= 1
        elif item["task"] == "GB-TASK3":
            assert len(item["answer"]) == 2 and len(options) == item["meta"]["n_options"]
        elif item["task"] == "GB-TASK4":
            pair = instances[item["meta"]["pair"]]
            assert options[item["answer"]] == pair["annotations"]["correction"]
            assert pair["text"] in options.values()
    task1 = [i for i in items if i["task"] == "GB-TASK1"]
    assert len({i["meta"]["sentence"] for i in task1[:6]}) == 1  # unit by unit, for --limit
    assert [(i["meta"]["n_options"], i["meta"]["seed"]) for i in task1[:6]] == [
        (2, 0), (2, 1), (2, 2), (4, 0), (4, 1), (4, 2),
    ]  # fmt: skip
    settings = built.manifest.artifacts["options_built"]
    assert settings == {"GB-TASK1": [2, 4], "GB-TASK2": [1, 2, 4, 6, 8], "GB-TASK3": [4, 3],
                        "GB-TASK4": [2]}  # fmt: skip


def _name(option: str) -> str:
    return option.split(": ")[0]


def test_no_wrong_option_is_right_too(built):
    """The distractor check: no point owning a sentence is offered as wrong, and back."""
    instances = {i["id"]: i for i in lines(built.folder.file("instances.jsonl"))}
    names = {p["id"]: p["name"] for p in lines(built.folder.file("points.jsonl"))}
    seen = Counter()
    for item in lines(built.dataset_path):
        options = {o["key"]: o["text"] for o in item["prompt"]["vars"].get("options", [])}
        wrong = [text for key, text in options.items() if key not in item["answer"]]
        if item["task"] == "GB-TASK1":
            said = item["prompt"]["vars"]["sentence"]
            assert not any(_name(text) in truth(said) for text in wrong), item["id"]
            if said == sentence("Definite article agreement", 2) and item["meta"]["n_options"] == 4:
                seen["task1"] += 1  # verb second applies: the three others are the distractors
                assert {_name(t) for t in options.values()} == set(WORD) - {
                    "Verb-second word order"
                }
        elif item["task"] == "GB-TASK2":
            point = names[item["meta"]["point"]]
            assert not any(point in truth(text) for text in wrong), item["id"]
            seen["task2"] += point == "Verb-second word order"
        elif item["task"] == "GB-TASK3":
            said = [instances[s]["text"] for s in item["meta"]["sentences"]]
            assert not any(_name(t) in truth(s) for t in wrong for s in said), item["id"]
        elif item["task"] == "GB-TASK4":
            assert instances[item["meta"]["pair"]]["annotations"]["correction"] != (
                GRAMMATICAL_TWIN_OF
            )
    assert seen["task1"] == 3 and seen["task2"] > 0


def test_the_build_report_names_the_skipped_page(built):
    report = built.folder.file("report.md").read_text(encoding="utf-8")
    assert "no OCR, 5 skipped pages" in report
    assert "page 5: image-only page skipped (no OCR engine: not installed)" in report
    assert built.manifest.status == "complete"


def test_validation_sample_round_trips_with_the_share_of_valid_sentences(built, tmp_path):
    import shutil

    folder = tmp_path / "build"
    shutil.copytree(built.folder.path, folder)
    text = (folder / "review.csv").read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 10 and {"english", "description", "pages", "minimal_pair"} <= set(rows[0])
    rejected = sentence("Verb-final subordinate clauses", 1)
    edited = sentence("Case forms of the definite article", 1)
    for row in rows:
        row["decision"], row["reviewer"] = "accept", "volunteer"
        if row["sentence"] == rejected:
            row["decision"] = "reject"
        elif row["sentence"] == edited:
            row["decision"], row["edited_sentence"] = "edit", "De Mann gesäit dem Mann net."
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    (folder / "reviewed.csv").write_text(out.getvalue(), encoding="utf-8")
    result = import_review(folder, folder / "reviewed.csv", use_cache=False)
    review = result.manifest.review
    assert review["decisions"] == {"accept": 8, "reject": 1, "edit": 1}
    assert review["validation"] == {"decided": 10, "valid": 8, "valid_pct": 80.0, "sampled": 10}
    # the rejected sentence leaves every bank; its twin and the edited sentence's leave Task 4
    assert result.manifest.tasks["GB-TASK1"] == 9 * 2 * 3
    assert result.manifest.tasks["GB-TASK4"] == 6 * 3  # 8 pairs were built (one twin was right)
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "Human validation: 8 of 10 sampled sentences judged valid (80.0 %)" in report


WRITTEN = {written(n, k) for n in WORD for k in SHAPES}
ENGLISH = {english(n, k): written(n, k) for n in WORD for k in SHAPES} | dict(FLORES)


def _options(prompt: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-Z])\. (.+)$", prompt, re.MULTILINE))


def knowing(request: ChatRequest) -> str:
    """A model that knows every point each of the book's sentences uses.

    It picks every option that is right, so it scores 1 only where no wrong option is right too.
    """
    prompt = request.messages[-1].content
    options = _options(prompt)
    if prompt.startswith("Translate"):
        return ENGLISH[prompt.strip().splitlines()[-1]]
    if "Answer with A or B" in prompt:
        return next(k for k, text in options.items() if text in WRITTEN)
    if "Grammar knowledge point:" in prompt:
        name = re.search(r"Grammar knowledge point: (.+?): ", prompt).group(1)
        picked = [k for k, text in options.items() if name in truth(text)]
        return ", ".join(picked) or "none"
    if "paragraph" in prompt:
        paragraph = re.search(r"Paragraph: (.+)", prompt).group(1)
        names = {n for s in WRITTEN if s in paragraph for n in truth(s)}
        return "The answer is " + " and ".join(
            k for k, text in options.items() if text.split(": ")[0] in names
        )
    said = re.search(r"Luxembourgish sentence: (.+)", prompt).group(1)
    return ", ".join(k for k, text in options.items() if text.split(": ")[0] in truth(said))


def guessing(request: ChatRequest) -> str:
    """A model that always picks the first option (and drops a word when it translates)."""
    prompt = request.messages[-1].content
    if prompt.startswith("Translate"):
        return "Translation: " + " ".join(ENGLISH[prompt.strip().splitlines()[-1]].split()[1:])
    if "Grammar knowledge point:" in prompt:
        return "none"
    return "A, B" if "paragraph" in prompt else "A"


def answers(request: ChatRequest) -> str:
    # one script, two decoding settings: greedy knows, sampling guesses
    return knowing(request) if request.params.temperature == 0 else guessing(request)


ScriptedBackend.register("grammar-book-answers", answers)
MODELS = ["scripted:grammar-book-answers", "scripted:grammar-book-answers?temperature=0.7"]


@pytest.fixture(scope="module")
def evaluated(built):
    folder = built.folder.path.parent / "eval"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRAMAGENTS_CACHE", str(folder.parent / "cache.sqlite"))
        asyncio.run(run_eval(built.folder.path, EvalOptions(models=MODELS, run_dir=folder)))
    return folder


def _expected(items: list[dict], task: str, answer, base: bool = True, n=None):
    """Mean and std over seeds of the share of items whose gold is `answer`."""
    per_seed = {}
    for item in items:
        meta = item["meta"]
        if item["task"] == task and meta["base"] == base and (n is None or meta["n_options"] == n):
            per_seed.setdefault(meta["seed"], []).append(item["answer"] == answer)
    shares = [mean(v) for _, v in sorted(per_seed.items())]
    return mean(shares), stdev(shares)


def test_eval_writes_accuracies_over_seeds_with_their_std(built, evaluated):
    summary = {(r["model"], r["task"], r["metric"]): r["score"]
               for r in json.loads((evaluated / "summary.json").read_text())}  # fmt: skip
    knows, guesses = MODELS
    for task in ("GB-TASK1", "GB-TASK2", "GB-TASK3", "GB-TASK4"):
        assert summary[knows, task, "acc"] == 1.0 and summary[knows, task, "acc_std"] == 0.0
    items = lines(built.dataset_path)
    for task, answer in (("GB-TASK1", ["A"]), ("GB-TASK2", []), ("GB-TASK3", ["A", "B"]),
                         ("GB-TASK4", "A")):  # fmt: skip
        expected = _expected(items, task, answer)
        assert summary[guesses, task, "acc"] == pytest.approx(expected[0])
        assert summary[guesses, task, "acc_std"] == pytest.approx(expected[1])
    assert summary[guesses, "GB-TASK1", "acc_n4"] == pytest.approx(
        _expected(items, "GB-TASK1", ["A"], base=False, n=4)[0]
    )
    assert 0 < summary[guesses, "GB-TASK1", "acc"] < 1
    report = (evaluated / "report.md").read_text(encoding="utf-8")
    assert "## Grammar-book Table 3 layout" in report
    perfect = " | ".join(["100.00 ± 0.00"] * 2 + ["1.00 ± 0.00"] * 4)
    assert f"| {knows} | {perfect} |" in report


def test_eval_draws_the_degradation_curves(built, evaluated):
    figures = json.loads((evaluated / "grammar-book" / "figures.json").read_text())
    curve = {(r["task"], r["model"], r["n"]): r for r in figures["degradation"]}
    assert {n for t, _, n in curve if t == "Task 2"} == {1, 2, 4, 6, 8}
    assert "Task 4" not in {t for t, _, _ in curve}  # one setting: no curve
    expected = _expected(lines(built.dataset_path), "GB-TASK1", ["A"], base=False, n=4)
    assert curve["Task 1", MODELS[1], 4]["mean"] == pytest.approx(expected[0])
    assert curve["Task 1", MODELS[1], 4]["std"] == pytest.approx(expected[1])
    svg = (evaluated / "grammar-book" / "degradation.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "number of options" in svg and "Task 3" in svg
    report = (evaluated / "report.md").read_text(encoding="utf-8")
    assert "![degradation](grammar-book/degradation.svg)" in report


def test_translation_scores_equal_sacrebleus_command_line_on_the_same_files(evaluated):
    summary = {(r["model"], r["metric"]): r["score"]
               for r in json.loads((evaluated / "summary.json").read_text())
               if r["task"] == "GB-TRANSLATE"}  # fmt: skip
    cli = Path(sys.executable).parent / "sacrebleu"
    for model in MODELS:
        stem = evaluated / "grammar-book" / "translations" / translation_stem(model, "into")
        out = subprocess.run(
            [str(cli), f"{stem}.ref.txt", "-i", f"{stem}.hyp.txt", "-m", "bleu", "chrf",
             "--chrf-word-order", "2", "-b", "-w", "4"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert json.loads(out) == [
            round(summary[model, "bleu"], 4),
            round(summary[model, "chrf++"], 4),
        ]
    assert summary[MODELS[0], "chrf++"] == 100.0 and summary[MODELS[1], "chrf++"] < 100.0
    report = (evaluated / "report.md").read_text(encoding="utf-8")
    assert "- spBLEU: NOT computed" in report or "- spBLEU: computed" in report
    assert "- COMET: not computed: set GRAMAGENTS_COMET_MODEL" in report


def test_eval_correlates_task_accuracies_with_translation_across_models(evaluated):
    figures = json.loads((evaluated / "grammar-book" / "figures.json").read_text())
    cells = {(c["method"], c["row"], c["column"]): c["r"] for c in figures["correlation"]}
    # the model that knows the book scores higher on every task and on chrF++
    for task in ("Task 1", "Task 2", "Task 3", "Task 4"):
        assert cells["Pearson", task, "chrF++"] == pytest.approx(1.0)
        assert cells["Spearman", task, "BLEU"] == pytest.approx(1.0)
    svg = (evaluated / "grammar-book" / "correlation.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Pearson" in svg and "Spearman" in svg
    report = (evaluated / "report.md").read_text(encoding="utf-8")
    assert "| Task 1 | Pearson | 1.00 | 1.00 |" in report
    assert "with fewer than three models a correlation is ±1 or undefined" in report


def test_a_flores_layout_set_is_read_and_scored_beside_the_generated_pairs(evaluated):
    from sacrebleu.metrics import CHRF

    figures = json.loads((evaluated / "grammar-book" / "figures.json").read_text())
    sets = figures["translation_sets"]
    guesses = MODELS[1]
    flores = sets[guesses]["FLORES200"]["into"]
    assert flores["n"] == 3 and sets[guesses]["G"]["into"]["n"] == 10
    # the guessing model drops the first word of each reference
    hypotheses = [" ".join(lb.split()[1:]) for _, lb in FLORES]
    expected = CHRF(word_order=2).corpus_score(hypotheses, [[lb for _, lb in FLORES]]).score
    assert flores["corpus"]["chrf++"] == pytest.approx(expected)
    assert sets[MODELS[0]]["FLORES200"]["into"]["corpus"]["chrf++"] == 100.0
    report = (evaluated / "report.md").read_text(encoding="utf-8")
    assert "## Translation sets (Table 1 layout)" in report
    assert "| FLORES200 | 3 |" in report and "| G (generated pairs) | 10 |" in report
    assert f"| {guesses} | FLORES200 | into | 3 |" in report
    assert f"| {guesses} | MIXED | into | 13 |" in report


def test_comet_is_given_for_every_set_together_and_per_set(evaluated, tmp_path, monkeypatch):
    import importlib.machinery
    import shutil
    import types

    from gramagents.recipes.grammar_book.report import grammar_book_section
    from gramagents.report.summary import summarize
    from gramagents.runtime.run import read_manifest

    folder = tmp_path / "eval"
    shutil.copytree(evaluated, folder)
    checkpoint = tmp_path / "model.ckpt"
    checkpoint.write_bytes(b"weights")
    monkeypatch.setenv("GRAMAGENTS_COMET_MODEL", str(checkpoint))

    class Model:  # a stand-in for unbabel-comet's model: words of the reference translated
        def predict(self, data, batch_size, gpus, progress_bar):
            scores = [len(set(d["mt"].split()) & set(d["ref"].split())) / len(d["ref"].split())
                      for d in data]  # fmt: skip
            return types.SimpleNamespace(scores=scores, system_score=mean(scores))

    fake = types.ModuleType("comet")
    fake.load_from_checkpoint = lambda path: Model()
    fake.__spec__ = importlib.machinery.ModuleSpec("comet", None)
    monkeypatch.setitem(sys.modules, "comet", fake)
    manifest = read_manifest(folder)
    grammar_book_section(folder, manifest, summarize(folder / "scores.jsonl"))
    figures = json.loads((folder / "grammar-book" / "figures.json").read_text())
    for model in MODELS:
        sets = figures["translation_sets"][model]
        per_set = [(d["into"]["comet"]["mean"], d["into"]["n"]) for d in sets.values()]
        mixed = figures["translation"][model]["comet"][0]
        assert mixed == pytest.approx(sum(m * n for m, n in per_set) / sum(n for _, n in per_set))
    assert figures["translation_sets"][MODELS[0]]["FLORES200"]["into"]["comet"]["mean"] == 1.0
    assert figures["translation_sets"][MODELS[1]]["FLORES200"]["into"]["comet"]["mean"] < 1.0


def test_the_radar_of_figure_3_is_in_the_viewer_and_the_report(evaluated):
    page = (evaluated / "report.html").read_text(encoding="utf-8")
    title = "Task accuracies per model, translation as the ring (Figure 3 layout)"
    assert title in page
    specs = [
        json.loads(s)
        for s in re.findall(r'<script type="application/json" id="spec-\d+">(.+?)</script>', page)
    ]
    [radar] = [s for s in specs if "facet" in s and "ring" in json.dumps(s)]
    rows = radar["data"]["values"]
    shapes = {(r["series"], r["axis"]): r["value"] for r in rows if r["layer"] == "shape"}
    assert shapes[MODELS[0], "Task 1"] == 1.0 and shapes[MODELS[0], "Task 4"] == 1.0
    rings = {r["series"]: r["value"] for r in rows if r["layer"] == "ring"}
    assert rings[MODELS[0]] == 1.0 and 0 < rings[MODELS[1]] < 1.0  # chrF++ / 100
    svg = (evaluated / "grammar-book" / "radar.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Task 3" in svg
    assert "![radar](grammar-book/radar.svg)" in (evaluated / "report.md").read_text()


SMALL = {  # the embedded model: shorter values and fewer pairs, so the job takes minutes
    "max_tokens: 640": "max_tokens: 40",
    "max_tokens: 192": "max_tokens: 40",
    "max_tokens: 128": "max_tokens: 24",
    "max_tokens: 160": "max_tokens: 40",
    "per_point: 3": "per_point: 2",
}


def gramagents(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gramagents", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip


@pytest.mark.slow
def test_the_embedded_model_runs_every_stage_and_records_every_outcome(tmp_path):
    recipe = (ROOT / "graphs" / "grammar-book.yaml").read_text(encoding="utf-8")
    for old, new in SMALL.items():
        assert old in recipe
        recipe = recipe.replace(old, new)
    (tmp_path / "small.yaml").write_text(recipe, encoding="utf-8")
    write_pdf(tmp_path / "book.pdf")
    args = ("build", "small.yaml", "--source", "book.pdf", "--limit", "2", "--run-dir", "b")
    result = gramagents(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("built ") and "pymupdf" not in result.stdout
    stages = json.loads((tmp_path / "b" / "manifest.json").read_text())["stages"]
    assert list(stages) == ["read", "sections", "classify", "windows", "extract", "merge",
                            "generate", "dedup", "backcheck", "twins", "distractors",
                            "banks"]  # fmt: skip
    said = result.stderr.splitlines()  # a line per stage as it ends, with its counts
    assert any(line.startswith("extract: planned 3, ") for line in said), result.stderr
    windows = stages["windows"]["text_windows"] + stages["windows"]["table_rows"]
    assert windows == stages["extract"]["planned"] == 3  # one text window, two table rows
    extract = stages["extract"]
    assert extract["points"] + extract["none"] + extract["failed"] == 3
    points = lines(tmp_path / "b" / "points.jsonl")
    assert stages["merge"]["kept"] == len(points)
    assert all(p["pages"] == [2] and p["model"] == "smollm2" for p in points)
    generate, dedup = stages["generate"], stages["dedup"]
    assert generate["planned"] == 2 * len(points)
    assert generate["generated"] + generate["failed"] == generate["planned"]
    assert dedup["before"] == generate["generated"]
    check = stages["backcheck"]
    assert check["planned"] == dedup["kept"]
    assert check["accepted"] + check["rejected"] + check["failed"] == check["planned"]
    assert stages["twins"]["planned"] == check["accepted"]
    report = (tmp_path / "b" / "report.md").read_text(encoding="utf-8")
    if generate["generated"] == 0:  # a small model may write nothing valid: the report says so
        assert "No sentence was generated, so none was checked." in report
        assert not (tmp_path / "b" / "instances.jsonl").exists()
    failures = lines(tmp_path / "b" / "failures.jsonl")
    assert sum(f["stage"] == "generate" for f in failures) == generate["failed"]
    instances = lines(tmp_path / "b" / "instances.jsonl") if generate["generated"] else []
    for instance in instances:
        if instance["kind"] == "example" and instance["status"] != "failed":
            [verdict] = instance["provenance"]["checks"]
            assert verdict["model"] == "smollm2" and verdict["reason"]
            assert 0 <= verdict["details"]["translation_quality"] <= 10
    assert sum(i["kind"] == "pair" for i in instances) == stages["twins"].get("made", 0)
    others = min(2, len(points) - 1)  # candidates: 2
    distractors = stages["distractors"]
    assert distractors["planned"] == check["accepted"] * others + stages["twins"].get("made", 0)
    assert distractors["planned"] == sum(v for k, v in distractors.items() if k != "planned")
    assert stages["banks"]["items"] == len(lines(tmp_path / "b" / "dataset.jsonl"))


@pytest.mark.slow
def test_the_embedded_model_at_two_decoding_settings_is_evaluated_on_the_banks(built, tmp_path):
    models = ["smollm2", "smollm2?temperature=0.8&seed=1"]
    args = ["eval", str(built.folder.path), "--limit", "6", "--run-dir", "e"]
    result = gramagents(*args, *(x for m in models for x in ("--model", m)), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = {(r["model"], r["task"], r["metric"]): r["score"]
               for r in json.loads((tmp_path / "e" / "summary.json").read_text())}  # fmt: skip
    for model in models:
        for task in ("GB-TASK1", "GB-TASK2", "GB-TASK3", "GB-TASK4"):
            assert 0.0 <= summary[model, task, "acc"] <= 1.0
            assert summary[model, task, "acc_std"] >= 0.0
        assert 0.0 <= summary[model, "GB-TRANSLATE", "chrf++"] <= 100.0
    assert (model, "GB-TASK1", "acc_n4") in summary  # --limit keeps every setting of a unit
    folder = tmp_path / "e" / "grammar-book"
    for name in ("degradation.svg", "correlation.svg"):
        assert (folder / name).read_text(encoding="utf-8").startswith("<svg")
    assert {p.name for p in (folder / "translations").iterdir()} == {
        f"{translation_stem(m, 'into')}.{part}.txt"
        for m in models
        for part in ("src", "hyp", "ref")
    }
    report = (tmp_path / "e" / "report.md").read_text(encoding="utf-8")
    for heading in ("Grammar-book Table 3 layout", "Figure 4 layout", "## Translation",
                    "Figure 2 layout"):  # fmt: skip
        assert heading in report
