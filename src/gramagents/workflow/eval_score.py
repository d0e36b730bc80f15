"""The eval graph's score step: read each answer, score it, and record both.

A chat answer is read by its task's extraction chain (which sees the prompt that was sent, so
that an echo of it is no answer) and scored by the task's metric, or by the judge's verdict for
a judged task; a minimal pair's two log-likelihoods are its answer. An answer the model could
not give, or one the judge could not be reached for, is recorded without a score, to be asked
(or judged) again when the run is resumed.
"""

from __future__ import annotations

from ..judging.verdict import Verdict
from ..records import ResponseRecord, ScoreRecord
from ..scoring.extract import Extraction, extract
from ..scoring.metrics import ItemScore, score_item
from .eval_work import EvalContext, ItemWork, LikelihoodPair

SCORE_META_KEYS = ("point", "name", "category", "level", "language", "position", "n")
"""Item metadata every score line carries (besides its task's breakdowns); `n`, the number of
sub-questions, lets reports state the size of a task's batches."""


class ChunkScorer:
    """Scores a chunk's answers of one model into its records."""

    def __init__(self, ctx: EvalContext) -> None:
        self.label = ctx.model.label
        self.tasks = ctx.tasks
        self.meta_keys = {
            name: (*SCORE_META_KEYS, *spec.breakdowns) for name, spec in ctx.tasks.items()
        }
        self.records = ctx.records(self.label)

    def score(self, work: list[ItemWork]) -> int:
        """Record every item's response and score, and append them; returns how many scored."""
        records, scored = self.records, 0
        for entry in work:
            response = self.response(entry)
            verdict = entry.verdict
            if response.error is not None or (verdict is not None and verdict.unreachable):
                records.add(response)  # asked (or judged) again when the run is resumed
                continue
            records.add(response, self.score_record(entry, response))  # serialised now
            scored += 1
        records.commit()
        return scored

    def response(self, entry: ItemWork) -> ResponseRecord:
        """The item's response record, its answer read (`entry.extraction`)."""
        item, generation, request = entry.item, entry.generation, entry.request
        if entry.likelihoods is not None:
            return self._pair_response(entry, entry.likelihoods)
        assert generation is not None and request is not None
        text = None if generation.error else generation.text
        known = {**item.prompt.vars, **item.meta}
        extraction = entry.extraction = extract(
            self.tasks[item.task].extractor, text, known, request.messages
        )
        return ResponseRecord(
            model=self.label,
            item_id=item.id,
            task=item.task,
            raw=text,
            extracted=extraction.value,
            rule=extraction.rule,
            invalid_reason=extraction.reason if text is not None else None,
            latency_s=round(generation.latency_s, 4),
            cached=generation.cached,
            error=generation.error,
            prompt_hash=request.prompt_hash,
        )

    def _pair_response(self, entry: ItemWork, pair: LikelihoodPair) -> ResponseRecord:
        """A minimal pair's scores as its extraction, and its response record."""
        good, bad = pair
        value = {
            "good": good.logprob,
            "bad": bad.logprob,
            "good_mean": good.mean_logprob,
            "bad_mean": bad.mean_logprob,
            "good_tokens": good.n_tokens,
            "bad_tokens": bad.n_tokens,
        }
        extraction = entry.extraction = Extraction(value, "loglikelihood")
        return ResponseRecord(
            model=self.label,
            item_id=entry.item.id,
            task=entry.item.task,
            raw=None,
            extracted="good" if value["good"] > value["bad"] else "bad",
            rule=extraction.rule,
            cached=good.cached and bad.cached,
            logprobs=value,
        )

    def score_record(self, entry: ItemWork, response: ResponseRecord) -> ScoreRecord:
        """The item's score line (`entry.score` set): by the judge, or by the task's metric."""
        item, extraction, verdict = entry.item, entry.extraction, entry.verdict
        assert extraction is not None
        invalid, reason = extraction.invalid, extraction.reason
        if verdict is not None:
            result, invalid = judged_score(verdict, response.raw or "", extraction)
            reason = (reason or "no-judgment") if invalid else None
        elif item.answer is None:
            result = ItemScore({})
        else:
            result = score_item(self.tasks[item.task].metric, extraction, item.answer, item.meta)
        entry.score = result
        meta = item.meta
        return ScoreRecord(
            model=self.label,
            item_id=item.id,
            task=item.task,
            gold=item.answer,
            extracted=response.extracted,
            invalid=invalid,
            invalid_reason=reason if invalid else None,
            scores=result.scores,
            details=result.details,
            meta={k: meta[k] for k in self.meta_keys[item.task] if k in meta},
        )


def judged_score(verdict: Verdict, answer: str, extraction: Extraction) -> tuple[ItemScore, bool]:
    """The score a verdict gives an answer, and whether it counts as invalid.

    No valid judgment, or no answer to judge (an echo, a refusal), is invalid and scored as
    the scale's minimum.
    """
    details = {"judge": verdict.as_details(), "answer_chars": len(answer)}
    lo, hi = verdict.scale
    total = verdict.total
    if total is None or extraction.invalid:
        return ItemScore({"judge_pct": 0.0, "judge_total": lo}, details), True
    pct = 100.0 * (total - lo) / (hi - lo) if hi > lo else 0.0
    return ItemScore({"judge_pct": pct, "judge_total": total}, details), False
