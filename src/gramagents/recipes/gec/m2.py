"""M2 files and span-based correction scoring with the conventions of ERRANT's `errant_compare`.

An M2 block is the tokenized source sentence (`S ...`) followed by its edits
(`A start end|||type|||correction|||REQUIRED|||-NONE-|||annotator`). An edit is matched on its
span and correction string; `UNK` edits are not scored; an annotator with no edits is written
as a `noop` edit. For each sentence, every (hypothesis annotator, reference annotator)
combination is counted, and the one that gives the best F-score for the running corpus totals
wins (ties: more true positives, then fewer false positives, then fewer false negatives);
precision and recall of an empty denominator are 1, and scores are rounded to four places.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NOOP = "noop"


@dataclass(frozen=True)
class M2Edit:
    """One annotated edit."""

    start: int
    end: int
    category: str
    correction: str
    annotator: int = 0


@dataclass
class M2Sentence:
    """A tokenized source sentence and the edits of every annotator."""

    source: str
    edits: list[M2Edit] = field(default_factory=list)

    def annotators(self) -> list[int]:
        """Annotator ids, in the order they first appear."""
        return list(dict.fromkeys(e.annotator for e in self.edits))

    def to_text(self) -> str:
        """The M2 block."""
        lines = [f"S {self.source}"]
        for e in self.edits:
            lines.append(
                f"A {e.start} {e.end}|||{e.category}|||{e.correction}|||REQUIRED|||"
                f"-NONE-|||{e.annotator}"
            )
        return "\n".join(lines)


def noop(annotator: int) -> M2Edit:
    """The edit that says an annotator changed nothing."""
    return M2Edit(-1, -1, NOOP, "-NONE-", annotator)


def write_m2(sentences: Iterable[M2Sentence]) -> str:
    """An M2 file: blocks separated by blank lines."""
    return "\n\n".join(s.to_text() for s in sentences) + "\n"


class M2FormatError(ValueError):
    """A line of an M2 file that cannot be read: its number (1-based) and the field."""

    def __init__(self, line: int, field: str, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.field = field
        self.message = message


def parse_m2(text: str) -> list[M2Sentence]:
    """Read an M2 file; a line that cannot be read raises `M2FormatError` naming it."""
    sentences: list[M2Sentence] = []
    source: str | None = None
    edits: list[M2Edit] = []
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if not line.strip():
            if source is not None:
                sentences.append(M2Sentence(source, edits))
            source, edits = None, []
        elif line.startswith("S "):
            if source is not None:
                raise M2FormatError(number, "S", "a second S line without a blank line before it")
            source = line[2:]
        elif line.startswith("A "):
            if source is None:
                raise M2FormatError(number, "A", "an A line before any S line")
            edits.append(_edit(number, line, len(source.split())))
        else:
            raise M2FormatError(number, "S", "neither an S line, an A line nor a blank line")
    if source is not None:
        sentences.append(M2Sentence(source, edits))
    return sentences


def _edit(number: int, line: str, tokens: int) -> M2Edit:
    fields = line[2:].split("|||")
    if len(fields) != 6:
        raise M2FormatError(number, "A", f"{len(fields)} fields separated by |||, not 6")
    span, category, correction, *_, annotator = fields
    try:
        start, end = (int(x) for x in span.split())
    except ValueError:
        raise M2FormatError(number, "span", f"'{span[:40]}' is not two token offsets") from None
    if (start, end) != (-1, -1) and not 0 <= start <= end <= tokens:
        raise M2FormatError(
            number, "span", f"{start} {end} lies outside the sentence's {tokens} tokens"
        )
    if not annotator.strip().isdigit():
        raise M2FormatError(number, "annotator", f"'{annotator[:40]}' is not a number")
    return M2Edit(start, end, category, correction, int(annotator))


@dataclass(frozen=True)
class Counts:
    """True positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


def prf(counts: Counts, beta: float = 0.5) -> tuple[float, float, float]:
    """Precision, recall and F-beta, rounded to four places as `errant_compare` prints them."""
    p = counts.tp / (counts.tp + counts.fp) if counts.fp else 1.0
    r = counts.tp / (counts.tp + counts.fn) if counts.fn else 1.0
    f = (1 + beta**2) * p * r / (beta**2 * p + r) if p + r else 0.0
    return round(p, 4), round(r, 4), round(f, 4)


Keyed = dict[tuple[int, int, str], list[str]]


def by_annotator(edits: Sequence[M2Edit]) -> dict[int, Keyed]:
    """Edits of each annotator keyed by (start, end, correction), categories listed."""
    table: dict[int, Keyed] = {}
    for edit in edits or [noop(0)]:
        bucket = table.setdefault(edit.annotator, {})
        if edit.category == "UNK":
            continue
        bucket.setdefault((edit.start, edit.end, edit.correction), []).append(edit.category)
    return table


def compare(hypothesis: Keyed, reference: Keyed) -> Counts:
    """Counts of one hypothesis annotator against one reference annotator."""
    tp = fp = fn = 0
    for key, categories in hypothesis.items():
        if categories and categories[0] == NOOP:
            continue
        if key in reference:
            tp += len(reference[key])
        else:
            fp += len(categories)
    for key, categories in reference.items():
        if categories and categories[0] == NOOP:
            continue
        if key not in hypothesis:
            fn += len(categories)
    return Counts(tp, fp, fn)


def choose(candidates: Iterable[Counts], running: Counts, beta: float = 0.5) -> Counts:
    """The candidate that is best for the running totals (first one on a full tie)."""
    best: Counts | None = None
    best_f = -1.0
    for counts in candidates:
        f = prf(running + counts, beta)[2]
        if best is None or (f, counts.tp, -counts.fp, -counts.fn) > (
            best_f,
            best.tp,
            -best.fp,
            -best.fn,
        ):
            best, best_f = counts, f
    return best or Counts()


def best_counts(
    hypothesis: Sequence[M2Edit], reference: Sequence[M2Edit], running: Counts, beta: float = 0.5
) -> Counts:
    """The counts of the annotator combination that is best for the running totals."""
    references = by_annotator(reference).values()
    return choose(
        (compare(hyp, ref) for hyp in by_annotator(hypothesis).values() for ref in references),
        running,
        beta,
    )


def read_m2_file(path: Path) -> list[M2Sentence]:
    """An M2 file from disk; a malformed one is one clear error."""
    from ...api import InputError, read_utf8

    text = read_utf8(path)
    if not text.strip():
        raise InputError(path, "file is empty", line=1)
    try:
        sentences = parse_m2(text)
    except M2FormatError as exc:
        raise InputError(path, exc.message, line=exc.line, field=exc.field) from None
    if not sentences:
        raise InputError(path, "no sentences (S lines followed by A lines)", line=1)
    return sentences


def only_annotators(sentences: list[M2Sentence], keep: set[int]) -> list[list[M2Edit]]:
    """Each sentence's edits by the annotators in `keep` (a sentence left with none: noop)."""
    return [[e for e in s.edits if e.annotator in keep] or [noop(min(keep))] for s in sentences]


def score_corpus(
    hypotheses: Sequence[Sequence[M2Edit]],
    references: Sequence[Sequence[M2Edit]],
    beta: float = 0.5,
) -> Counts:
    """Corpus totals of span-based correction, sentence by sentence in order."""
    if len(hypotheses) != len(references):
        raise ValueError("hypothesis and reference have different numbers of sentences")
    total = Counts()
    for hyp, ref in zip(hypotheses, references, strict=True):
        total = total + best_counts(hyp, ref, total, beta)
    return total
