"""Local transformers models: batched generation and batched log-likelihood.

Requests from concurrent callers are merged by a micro-batcher, tokenized once, grouped by
decoding parameters and sorted by length (longest first), then cut into batches. On a CPU a
batch's prompts are computed in runs of like lengths and decoded together (`hf_prefix`);
elsewhere a batch's rows are at least half as long as its longest and padded on the left.
Log-likelihood merges the sequences of a batch into prefix trees, so that a prefix shared by
several sequences (the start of a minimal pair, the prompt before each option) is computed
once (`prefix_tree`), and returns the summed and per-token mean log-probability with the
token count; what is scored after what is the request's conditioning (`conditioning`).
Prompts longer than the context window (the model's, or a shorter one configured with
`?max_length=N`) are cut in the middle, keeping the instruction and the question's end, as
the EduEval paper does (§4.1).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import BackendUnavailable, SpecError
from ..extras import require
from ..records import ChatRequest, Generation, GenParams, Loglikelihood, LoglikelihoodRequest
from ..runtime.batching import MicroBatcher, deliver
from ..runtime.cache import canonical_json
from ..runtime.interrupt import STOP, Interrupted, not_asked_generation, not_asked_likelihood
from ..runtime.threads import fitted_threads, refit
from .base import Backend, BackendSettings
from .conditioning import encode, scoring_text
from .guided import FieldPlan, GuidedDecoder, plan_schema
from .hf_load import (
    LoadedLM,
    dtype_identity,
    file_sha256,
    folder_fingerprint,
    load_lm,
    resolve_device,
    resolve_dtype,
)
from .hf_output import eos_ids, filled, finish_generation, keep_finished, stop_criteria
from .hf_prefix import generation_inputs
from .spec import ModelSpec


def _chunks(seq: Sequence[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(seq), size):
        yield list(seq[start : start + size])


def _cut_middle(ids: list[int], limit: int) -> list[int]:
    if len(ids) <= limit:
        return ids
    head = limit // 2
    return ids[:head] + ids[len(ids) - (limit - head) :]


def _buckets(
    ordered: Sequence[int], lengths: Sequence[int], size: int, halve: bool = True
) -> Iterator[list[int]]:
    """Batches of `ordered` (longest first) of `size` rows at most, cut where lengths halve."""
    batch: list[int] = []
    for index in ordered:
        if batch and (len(batch) == size or halve and 2 * lengths[index] < lengths[batch[0]]):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


OPTIONS = set(
    "gguf_file dtype device batch_size revision structured prefix_sharing token_budget "
    "max_length guided_steps lanes".split()
)


class HFBackend(Backend):
    """A causal LM loaded with transformers, on GPU when there is one."""

    name = "hf"
    supports_loglikelihood = True
    counts_answers = True  # its batchers count each answer as it is handed back (`deliver`)
    structured_mode = "guided"

    def __init__(self, spec: ModelSpec, settings: BackendSettings) -> None:
        super().__init__(spec, settings)
        spec.reject_unknown_options(OPTIONS)
        require("hf", "a local model (hf:, smollm2)")
        if not spec.target:
            raise SpecError(spec.raw, "hf: needs a local folder or a hub id, e.g. hf:./my-model")
        self.target = spec.target
        self.gguf_file = spec.option("gguf_file")
        self.revision = spec.option("revision")
        self.device = resolve_device(spec.option("device"))
        self.dtype = resolve_dtype(spec.option("dtype"), self.device)
        cuda = self.device.startswith("cuda")
        self.batch_size = spec.whole("batch_size") or (64 if cuda else 32)
        self.token_budget = spec.whole("token_budget") or (8192 if cuda else 1024)
        self.prefix_sharing = spec.choice("prefix_sharing", ("true", "false")) == "true"
        self.max_length = spec.whole("max_length", least=16)  # None: the model's own context
        mode = spec.choice("structured", ("guided", "md_json"))
        self.structured_mode = mode  # type: ignore[assignment]
        # cached: a row's prompt computed once for all its fields (hf_steps.py); batched: each
        # field a batched pass over the prompts again (faster for many short prompts).
        self.guided_steps = spec.choice("guided_steps", ("cached", "batched"))
        self._steps: Any = None
        self.lanes = None if spec.option("lanes", "auto") == "auto" else spec.whole("lanes")
        # Alone, never beside another batch: the tokenizer (a fast one is not thread-safe),
        # structured answers (one decoder cache), sampled batches (torch's one generator).
        self._alone = threading.Lock()
        self._loaded = False
        size = self.batch_size
        # On a CPU a lane takes a batch at a time, so that its lanes end at about one time.
        self._generate_batcher = MicroBatcher(
            self._generate_sync, 4 * size if cuda else size, lanes=self._lane_count, granule=size
        )
        # Scoring takes many requests at once: the more sequences meet, the more prefixes
        # they share (prefix_tree); the token budget still bounds each forward pass.
        self._score_batcher = MicroBatcher(
            self._loglikelihood_sync, max(self.batch_size * 4, self.token_budget)
        )

    # -- identity and loading ------------------------------------------------------------------

    def _model_name(self) -> str:
        return str(Path(self.target).resolve()) if Path(self.target).exists() else self.target

    def identity(self) -> dict[str, Any]:
        """Model path or id, a content revision, and the dtype (it changes the numbers)."""
        path = Path(self.target)
        if path.exists():
            revision = (
                file_sha256(path / self.gguf_file) if self.gguf_file else folder_fingerprint(path)
            )
        else:
            revision = self.revision or "main"
        return {
            "backend": "hf",
            "model": self._model_name(),
            "gguf_file": self.gguf_file,
            "revision": revision,
            "dtype": dtype_identity(self.dtype),
            **({"max_length": self.max_length} if self.max_length else {}),
        }

    @property
    def lm(self) -> LoadedLM:
        """The loaded model (loaded on first use, once per process)."""
        return load_lm(
            self.target,
            gguf_file=self.gguf_file,
            dtype=self.dtype,
            device=self.device,
            revision=self.revision,
        )

    async def check(self) -> None:
        """Fail now on a local path that is not there; weights load on the first cache miss."""
        path = Path(self.target).expanduser()
        local = self.target.startswith(("/", "./", "../", "~")) or path.exists()
        if local and not path.exists():
            raise BackendUnavailable(f"cannot load model '{self.target}': no such folder")
        if local and self.gguf_file and not (path / self.gguf_file).is_file():
            raise BackendUnavailable(
                f"cannot load model '{self.target}': no file {self.gguf_file} in it"
            )

    def _lane_count(self) -> int:
        """Batches computed at once: `lanes=`; else 2 on a CPU with 2+ threads fitted, else 1."""
        if not self._loaded:
            return 1  # the first batch loads the model (and imports torch) alone
        if self.lanes is not None:
            return self.lanes
        threads = fitted_threads()
        return 2 if self.device == "cpu" and threads is not None and threads >= 2 else 1

    @property
    def chunk_size(self) -> int:
        """Two batches per unit of eval work."""
        return self.batch_size * 2

    # -- generation ----------------------------------------------------------------------------

    async def complete(self, requests: list[ChatRequest]) -> list[Generation]:
        """Generate completions (batched with other callers' requests)."""
        results = await self._generate_batcher.submit(requests)
        self.stats.requests_sent += sum(1 for g in results if not g.interrupted)
        return results

    def render(self, request: ChatRequest) -> list[int]:
        """Token ids of a request's prompt.

        A model with a chat template reads the messages through it; one without (a base
        model) reads the request's continuation form when it has one, else the messages'
        contents joined.
        """
        lm = self.lm
        if lm.has_chat_template:
            messages = [m.model_dump() for m in request.messages]
            text = lm.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            ids = lm.tokenizer(text, add_special_tokens=False).input_ids
        else:
            text = request.base_prompt
            if text is None:
                text = "\n\n".join(m.content for m in request.messages)
            ids = lm.tokenizer(text).input_ids
        context = min(lm.max_length, self.max_length or lm.max_length)
        return _cut_middle(list(ids), max(8, context - request.params.max_tokens))

    def _generate_sync(self, requests: list[ChatRequest]) -> list[Generation]:
        with self._alone:
            encoded = [self.render(r) for r in requests]
            loading, self._loaded = not self._loaded, True
        if loading:  # loaded now: the other lanes start beside this batch
            self._generate_batcher.lanes_changed()
        free: dict[GenParams, list[int]] = defaultdict(list)
        guided: dict[str, list[int]] = defaultdict(list)
        plans: dict[str, list[FieldPlan]] = {}
        for index, request in enumerate(requests):
            plan = (
                plan_schema(request.response_schema)
                if request.structured_mode == "guided"
                else None
            )
            if plan is None:
                free[request.params].append(index)
            else:
                key = canonical_json(request.response_schema)
                plans[key] = plan
                guided[key].append(index)
        results: list[Generation | None] = [None] * len(requests)
        lengths = [len(e) for e in encoded]
        for params, indices in free.items():
            ordered = sorted(indices, key=lambda i: -lengths[i])
            # A CPU computes prompts in runs of like lengths (hf_prefix): no cut where they halve
            for batch in _buckets(ordered, lengths, self.batch_size, self.device != "cpu"):
                if STOP.requested:  # a stop: no batch starts
                    outputs = [not_asked_generation() for _ in batch]
                elif params.temperature > 0:
                    with self._alone:
                        outputs = self._generate_batch([encoded[i] for i in batch], params)
                else:
                    outputs = self._generate_batch([encoded[i] for i in batch], params)
                for index, generation in zip(batch, outputs, strict=True):
                    results[index] = deliver(index, generation)
        with self._alone:
            decoder = self._guided_decoder()
            for key, indices in guided.items():
                ordered = sorted(indices, key=lambda i: -lengths[i])
                for batch in _buckets(ordered, lengths, self.batch_size):
                    outputs = self._guided_batch(
                        decoder,
                        [encoded[i] for i in batch],
                        [requests[i] for i in batch],
                        plans[key],
                    )
                    for index, generation in zip(batch, outputs, strict=True):
                        results[index] = deliver(index, generation)
        return filled(results)

    def _guided_batch(
        self,
        decoder: GuidedDecoder,
        prompts: list[list[int]],
        requests: list[ChatRequest],
        plan: list[FieldPlan],
    ) -> list[Generation]:
        """One batch of structured answers, or none when a stop comes before or while it runs.

        An object cut short is no answer.
        """
        started = time.perf_counter()
        try:
            STOP.check()
            outputs = decoder.run(prompts, requests, plan)
            STOP.check()
        except Interrupted:
            return [not_asked_generation() for _ in prompts]
        elapsed = time.perf_counter() - started
        return [g.model_copy(update={"latency_s": elapsed}) for g in outputs]

    def _guided_decoder(self) -> GuidedDecoder:
        if self.guided_steps == "batched":
            return GuidedDecoder(self._encode_piece, self._generate_sorted, self._score_choices)
        from .hf_steps import CachedSteps

        if self._steps is None:  # kept: a re-ask reuses its first prompt's cache
            self._steps = CachedSteps(self.lm, eos_ids(self.lm))
        return GuidedDecoder(self._encode_piece, self._steps.generate, self._steps.score)

    def _encode_piece(self, text: str) -> list[int]:
        return list(self.lm.tokenizer(text, add_special_tokens=False).input_ids) if text else []

    def _generate_sorted(self, batch: list[list[int]], params: GenParams) -> list[Generation]:
        ordered = sorted(range(len(batch)), key=lambda i: -len(batch[i]))
        results: list[Generation | None] = [None] * len(batch)
        for chunk in _buckets(ordered, [len(ids) for ids in batch], self.batch_size):
            STOP.check()  # guided steps: a stop abandons the whole object (_guided_batch)
            for index, generation in zip(
                chunk, self._generate_batch([batch[i] for i in chunk], params), strict=True
            ):
                results[index] = generation
        STOP.check()
        return filled(results)

    def _score_sorted(self, pairs: list[tuple[list[int], list[int]]]) -> list[float]:
        if self.prefix_sharing and self._tree_attention_ok():
            shared = self._score_shared(pairs)
            STOP.check()
            return [scored.logprob for scored in shared]
        ordered = sorted(range(len(pairs)), key=lambda i: -sum(map(len, pairs[i])))
        results: list[float | None] = [None] * len(pairs)
        for chunk in _chunks(ordered, self.batch_size):
            STOP.check()
            for index, scored in zip(
                chunk, self._score_batch([pairs[i] for i in chunk]), strict=True
            ):
                results[index] = scored.logprob
        return filled(results)

    def _generate_batch(self, batch: list[list[int]], params: GenParams) -> list[Generation]:
        import torch

        lm = self.lm
        tokenizer, model = lm.tokenizer, lm.model
        refit()  # threads fitted to the machine between batches (command line only)
        started = time.perf_counter()
        prepared = generation_inputs(lm, batch, self.prefix_sharing, self.device == "cpu")
        if prepared is None:  # a stop came while its prompts were computed
            return [not_asked_generation() for _ in batch]
        input_ids, attention, cached = prepared
        width = input_ids.shape[1]
        eos = eos_ids(lm)
        kwargs: dict[str, Any] = {
            "max_new_tokens": params.max_tokens,
            "pad_token_id": tokenizer.pad_token_id,
            "eos_token_id": sorted(eos),
            "stopping_criteria": stop_criteria(),  # a stop ends the batch after this step
            **cached,
        }
        if params.stop:
            kwargs.update(stop_strings=list(params.stop), tokenizer=tokenizer)
        if params.temperature > 0:
            kwargs.update(do_sample=True, temperature=params.temperature, top_p=params.top_p)
            torch.manual_seed(params.seed if params.seed is not None else 0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            output = model.generate(
                input_ids=input_ids.to(lm.device), attention_mask=attention.to(lm.device), **kwargs
            )
        elapsed = time.perf_counter() - started
        generations = [
            finish_generation(
                tokenizer, output[row, width:].tolist(), eos, params, len(ids), elapsed
            )
            for row, ids in enumerate(batch)
        ]
        return keep_finished(generations, params)

    # -- log-likelihood ------------------------------------------------------------------------

    async def loglikelihood(self, requests: list[LoglikelihoodRequest]) -> list[Loglikelihood]:
        """Score continuations (batched with other callers' requests)."""
        results = await self._score_batcher.submit(requests)
        self.stats.requests_sent += sum(1 for r in results if not r.interrupted)
        return results

    def encode_pair(self, request: LoglikelihoodRequest) -> tuple[list[int], list[int]]:
        """Context and continuation token ids, as the request's conditioning makes them.

        An empty context is the model's prefix token (BOS, or EOS); the rest follows
        lm-evaluation-harness's encoding (models/conditioning.py).
        """
        return encode(self.lm.tokenizer, scoring_text(request))

    def _loglikelihood_sync(self, requests: list[LoglikelihoodRequest]) -> list[Loglikelihood]:
        encoded = [self.encode_pair(r) for r in requests]
        if self.prefix_sharing and self._tree_attention_ok():
            return self._score_shared(encoded)
        ordered = sorted(range(len(requests)), key=lambda i: -sum(map(len, encoded[i])))
        results: list[Loglikelihood | None] = [None] * len(requests)
        for batch in _chunks(ordered, self.batch_size):
            scores = (
                [not_asked_likelihood() for _ in batch]
                if STOP.requested
                else self._score_batch([encoded[i] for i in batch])
            )
            for index, scored in zip(batch, scores, strict=True):
                results[index] = scored
        return filled(results)

    def _tree_attention_ok(self) -> bool:
        """Whether the model takes a custom 4-D attention mask (flash attention does not)."""
        config = getattr(self.lm.model, "config", None)
        return getattr(config, "_attn_implementation", "eager") in ("eager", "sdpa")

    def _score_shared(self, encoded: list[tuple[list[int], list[int]]]) -> list[Loglikelihood]:
        from .prefix_tree import score_packed

        limit = self.lm.max_length
        sequences, counts = [], []
        for context, continuation in encoded:
            whole = (context + continuation)[-(limit + 1) :]
            sequences.append(whole)
            counts.append(min(len(continuation), len(whole) - 1))
        scored = score_packed(
            self.lm, sequences, counts, self.token_budget, stop=lambda: STOP.requested
        )
        return [
            Loglikelihood(
                logprob=s.logprob,
                mean_logprob=s.logprob / n if n else 0.0,
                n_tokens=n,
                greedy=s.greedy,
            )
            if s is not None
            else not_asked_likelihood()  # a stop came before its batch
            for s, n in zip(scored, counts, strict=True)
        ]

    def _forward_left_padded(self, rows: list[list[int]], keep: int) -> Any:
        """Logits of the last `keep` positions of left-padded rows."""
        import torch

        lm = self.lm
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), lm.tokenizer.pad_token_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for index, row in enumerate(rows):
            input_ids[index, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            attention[index, width - len(row) :] = 1
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            return lm.model(
                input_ids=input_ids.to(lm.device),
                attention_mask=attention.to(lm.device),
                position_ids=positions.to(lm.device),
                logits_to_keep=keep,
            ).logits

    def _score_batch(self, batch: list[tuple[list[int], list[int]]]) -> list[Loglikelihood]:
        import torch

        limit = self.lm.max_length
        rows = []
        for context, continuation in batch:
            whole = (context + continuation)[-(limit + 1) :]
            kept = min(len(continuation), len(whole) - 1)
            rows.append((whole[:-1], continuation[len(continuation) - kept :]))
        keep = max(1, max(len(targets) for _, targets in rows))
        logits = self._forward_left_padded([inputs for inputs, _ in rows], keep)
        results = []
        for row, (_, targets) in enumerate(rows):
            if not targets:
                results.append(
                    Loglikelihood(logprob=0.0, mean_logprob=0.0, n_tokens=0, greedy=True)
                )
                continue
            scores = torch.log_softmax(logits[row, keep - len(targets) :].float(), dim=-1)
            target = torch.tensor(targets, device=scores.device)
            picked = scores.gather(1, target.unsqueeze(1)).squeeze(1)
            total = float(picked.sum())
            results.append(
                Loglikelihood(
                    logprob=total,
                    mean_logprob=total / len(targets),
                    n_tokens=len(targets),
                    greedy=bool((scores.argmax(dim=-1) == target).all()),
                )
            )
        return results

    def _score_choices(
        self, prefixes: list[list[int]], choices: list[list[int]]
    ) -> list[list[float]]:
        """Log-likelihood of each choice after each prefix (one pass when choices are 1 token)."""
        import torch

        if all(len(c) == 1 for c in choices):
            candidates = [c[0] for c in choices]
            ordered = sorted(range(len(prefixes)), key=lambda i: -len(prefixes[i]))
            results: list[list[float] | None] = [None] * len(prefixes)
            for chunk in _chunks(ordered, self.batch_size):
                STOP.check()
                logits = self._forward_left_padded([prefixes[i] for i in chunk], 1)
                scores = torch.log_softmax(logits[:, -1].float(), dim=-1)[:, candidates]
                for index, row in zip(chunk, scores.tolist(), strict=True):
                    results[index] = row
            return filled(results)
        flat = self._score_sorted([(p, c) for p in prefixes for c in choices])
        width = len(choices)
        return [flat[i * width : (i + 1) * width] for i in range(len(prefixes))]
