"""The eval graph's score step: read each answer, score it, and record both.

A chat answer is read by its task's extraction chain (which sees the prompt that was sent, so
that an echo of it is no answer) and scored by the task's metric, or by the judge's verdict for
a judged task; a minimal pair's two log-likelihoods are its answer, and a pair asked as a
forced choice has its two replies read apart (scoring/pair_choice.py). An answer the model could
not give, or one the judge could not be reached for, is recorded without a score, to be asked
(or judged) again when the run is resumed.
"""

from __future__ import annotations

from ..judging.verdict import JuryVerdict
from ..records import Generation, ResponseRecord, ScoreRecord
from ..scoring.extract import Extraction, extract
from ..scoring.metrics import ItemScore, score_item
from ..scoring.pair_choice import ORDERS, order_meta, order_vars, pair_reading
from .eval_work import EvalContext, ItemWork, LikelihoodPair

SCORE_META_KEYS = ("point", "name", "category", "level", "language", "position", "n")
"""Item metadata every score line carries (besides its task's breakdowns); `n`, the number of
sub-questions, lets reports state the size of a task's batches."""
STORED_RAW_CHARS = 65_536
"""Characters of a raw answer a response line keeps (the answer is read and scored whole; a
longer one is kept to here, with its length in `raw_chars`), so that a model or server that
answers at length cannot fill the run folder."""


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
        if entry.replies is not None:
            return self._choice_response(entry, entry.replies)
        assert generation is not None and request is not None
        text = None if generation.error else generation.text
        known = {**item.prompt.vars, **item.meta}
        extraction = entry.extraction = extract(
            self.tasks[item.task].extractor, text, known, request.messages
        )
        cut = text is not None and len(text) > STORED_RAW_CHARS
        return ResponseRecord(
            model=self.label,
            item_id=item.id,
            task=item.task,
            raw=text[:STORED_RAW_CHARS] if cut and text is not None else text,
            raw_chars=len(text) if cut and text is not None else None,
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

    def _choice_response(self, entry: ItemWork, replies: tuple[Generation, ...]) -> ResponseRecord:
        """A pair asked as a forced choice: each order's reply read, and the pair's answer."""
        item, chats = entry.item, entry.chats()
        error = next((g.error for g in replies if g.error), None)
        readings = [
            extract(
                self.tasks[item.task].extractor,
                None if error else g.text,
                order_meta(order_vars(item.prompt.vars, order)),
                request.messages,
            )
            for g, request, order in zip(replies, chats, ORDERS, strict=True)
        ]
        extraction = entry.extraction = pair_reading(readings)
        return ResponseRecord(
            model=self.label,
            item_id=item.id,
            task=item.task,
            raw=None,
            extracted=extraction.value,
            rule=extraction.rule,
            invalid_reason=extraction.reason if error is None else None,
            latency_s=round(sum(g.latency_s for g in replies), 4),
            cached=all(g.cached for g in replies),
            error=error,
            prompt_hash=chats[0].prompt_hash,
            choices=[
                {
                    "order": order,
                    "raw": None if error else g.text,
                    "extracted": r.value,
                    "chose": chose,
                    "rule": r.rule,
                    "invalid_reason": r.reason,
                }
                for g, r, order, chose in zip(
                    replies, readings, ORDERS, extraction.value, strict=True
                )
            ],
        )

    def score_record(self, entry: ItemWork, response: ResponseRecord) -> ScoreRecord:
        """The item's score line (`entry.score` set): by the judge, or by the task's metric."""
        item, extraction, verdict = entry.item, entry.extraction, entry.verdict
        assert extraction is not None
        invalid, reason = extraction.invalid, extraction.reason
        if verdict is not None:
            whole = entry.generation.text if entry.generation is not None else response.raw
            result, invalid = judged_score(verdict, whole or "", extraction)
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


def judged_score(
    verdict: JuryVerdict, answer: str, extraction: Extraction
) -> tuple[ItemScore, bool]:
    """The score the jury's verdict gives an answer, and whether it counts as invalid.

    No valid judgment from any judge, or no answer to judge (an echo, a refusal), is invalid
    and scored as the scale's minimum.
    """
    details = {"judge": verdict.as_details(), "answer_chars": len(answer)}
    lo, hi = verdict.scale
    total = verdict.total
    if total is None or extraction.invalid:
        return ItemScore({"judge_pct": 0.0, "judge_total": lo}, details), True
    pct = 100.0 * (total - lo) / (hi - lo) if hi > lo else 0.0
    return ItemScore({"judge_pct": pct, "judge_total": total}, details), False
