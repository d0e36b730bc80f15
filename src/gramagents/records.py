"""Records that flow between stages: sources, agents, banks, models, scoring and run folders."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from .redact import redact


class Record(BaseModel):
    """Base for records: field docstrings become schema descriptions."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")


# --- provenance -------------------------------------------------------------------------------


class SourceRef(Record):
    """Where a value came from in a user's file."""

    path: str
    """File the value was read from, as given by the user."""
    line: int
    """1-based line (for CSV: the physical line of the row)."""


class CheckVerdict(Record):
    """The outcome of one back-check (or one human review decision) on an instance."""

    check: str
    """Name of the check, e.g. `instance-backcheck` or `human-review`."""
    passed: bool
    """Whether the instance passed the check."""
    reason: str = ""
    """Why, in the checker's words."""
    details: dict[str, Any] = Field(default_factory=dict)
    """The checker's structured verdict (every field it returned)."""
    decided_by: str = "agent"
    """`agent`, or the reviewer's name for human decisions."""
    model: str | None = None
    """Model spec of the agent that decided, if an agent did."""
    prompt_hash: str | None = None
    """Hash of the prompt template the agent used."""


class Provenance(Record):
    """Everything needed to trace an instance or item back to its origin."""

    source: list[SourceRef] = Field(default_factory=list)
    """Source rows the value derives from."""
    agent: str | None = None
    """Agent that produced the text, or None when it is the source's own text."""
    model: str | None = None
    """Model spec the producing agent ran on."""
    prompt_hash: str | None = None
    """Hash of the producing agent's prompt template."""
    checks: list[CheckVerdict] = Field(default_factory=list)
    """Back-checks the value went through, with their verdicts, in order."""
    notes: list[str] = Field(default_factory=list)
    """Free-text notes, e.g. why an agent's output was not used."""


# --- grammar sources --------------------------------------------------------------------------


class MinimalPair(Record):
    """An ungrammatical sentence and its corrections (CTSEG §3.2)."""

    ungrammatical: str
    """A learner-like sentence with one error tied to the grammar item."""
    correction: str
    """Step 2: the correction that uses the grammar item."""
    alternatives: list[str] = Field(default_factory=list)
    """Step 3: other valid corrections that do not depend on the grammar item."""


class GrammarPoint(Record):
    """One grammar point of a grammar-point table (or one item of a grammar-item list)."""

    id: str
    """Identifier, unique in the table (CPG-EVAL uses 4-digit codes such as `1063`)."""
    category: str
    """Grammatical category the point belongs to, e.g. `“是”字句` or `Modal verbs`."""
    group: str | None = None
    """The set of points this one is told apart from (CPG-EVAL's CAT-GRA options and same-group
    negatives), where it is not the category: None for the category, an empty string for no
    group at all."""
    level: int | str
    """Proficiency level (an integer level or a label such as `A2`)."""
    name: str
    """The point's name as shown to models, e.g. `表示等同或类属`."""
    description: str = ""
    """Longer description; used for similarity of points."""
    language: str
    """Language of the point's sentences (`zh`, `en`, ...)."""
    examples: list[str] = Field(default_factory=list)
    """Sentences that contain the point."""
    confusers: list[str] = Field(default_factory=list)
    """Sentences that look like the point but do not contain it."""
    pairs: list[MinimalPair] = Field(default_factory=list)
    """Minimal pairs for the item, when the source gives some (grammar-item lists)."""
    source: list[SourceRef] = Field(default_factory=list)
    """Rows of the table that define this point."""

    def label(self) -> str:
        """The point as written inside prompts: `category：name` (full-width colon for CJK).

        A point without a name is its category alone.
        """
        if not self.name:
            return self.category
        colon = "：" if self.language in CJK_LANGUAGES else ": "
        return f"{self.category}{colon}{self.name}"


CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})


class Instance(Record):
    """A sentence tied to a grammar point, as it moves through generation and checking."""

    id: str
    """Stable identifier, e.g. `1063/ex/3`."""
    point_id: str
    """The grammar point the sentence is an instance (or confuser) of."""
    text: str
    """The sentence."""
    kind: Literal["example", "confuser", "pair"] = "example"
    """`example` contains the point; `confuser` looks like it but does not; `pair` is an
    ungrammatical sentence (in `text`) whose corrections are in `annotations`."""
    origin: Literal["source", "agent"] = "source"
    """Whether the text is the source's own or an agent's."""
    replaces: str | None = None
    """Id of the source instance an agent rewrote into this one."""
    source_text: str | None = None
    """The source sentence an agent rewrote, when `origin` is `agent`."""
    status: Literal["accepted", "rejected", "failed"] = "accepted"
    """Only accepted instances enter banks. Rejected ones failed a back-check; failed ones
    could not be checked (the agent gave no valid verdict). Both are kept with their reasons."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Where the sentence came from and what checked it."""
    annotations: dict[str, Any] = Field(default_factory=dict)
    """What the producing agent said about the sentence (e.g. the kind of confusion)."""


# --- banks ------------------------------------------------------------------------------------


class PromptParts(Record):
    """A prompt as template plus variables, rendered at evaluation time."""

    template: str
    """Template path under `prompts/`, e.g. `cpg/single.zh.md`."""
    vars: dict[str, Any] = Field(default_factory=dict)
    """Variables the template is rendered with."""


class Item(Record):
    """One question of a bank: what is asked, and the gold answer."""

    id: str
    """Stable identifier, unique in the dataset."""
    task: str
    """Task (bank) name, e.g. `SINGLE-T`."""
    prompt: PromptParts
    """The question."""
    answer: Any = None
    """Gold answer in the task's answer space (None when the source has no gold)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Grammar point, category, level, language, provenance and task-specific data."""


# --- model calls ------------------------------------------------------------------------------


class Message(Record):
    """One chat message."""

    role: Literal["system", "user", "assistant"]
    content: str


class GenParams(Record):
    """Decoding parameters; all of them are part of the cache key."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid", frozen=True)

    temperature: float = 0.0
    """0 means greedy decoding."""
    top_p: float = 1.0
    max_tokens: int = 256
    """Maximum number of new tokens."""
    stop: tuple[str, ...] = ()
    """Strings that end the completion (not included in it)."""
    seed: int | None = None
    """Sampling seed where the backend supports one."""


class ChatRequest(Record):
    """A request for one completion."""

    messages: list[Message]
    params: GenParams = Field(default_factory=GenParams)
    sample: int = 0
    """Sample index, so that repeated samples of one prompt are cached apart."""
    prompt_hash: str | None = None
    """Hash of the prompt template the messages were rendered from."""
    rubric_hash: str | None = None
    """Hash of the rubric a judge prompt embeds."""
    response_schema: dict[str, Any] | None = None
    """JSON schema of the structured output asked for, if any."""
    structured_mode: str | None = None
    """How structured output is asked for (e.g. `json`, `md_json`), if any."""
    base_prompt: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """The prompt's continuation form, one text for a model without a chat template (a base
    model), when the template has one (`templates`); such a model reads the messages joined
    otherwise. Left out of the record (and so of the cache key) when None."""


class Generation(Record):
    """One completion, or the reason there is none."""

    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    """Seconds the backend took (0 for cached answers)."""
    cached: bool = False
    """Served from the response cache."""
    error: str | None = None
    """Set when the request failed after its retries; such results are never cached."""
    interrupted: bool = Field(default=False, exclude=True)
    """Not answered: the command was stopped first (runtime/interrupt.py). Never cached or
    recorded; the request is asked when the run is resumed."""


Conditioning = Literal["spaced", "bare"]
"""How a scored sentence follows its context (models/conditioning.py): after a space, or as
a text begins."""


class LoglikelihoodRequest(Record):
    """Score `continuation` given `context`, joined as `conditioning` says."""

    context: str
    """Text before the scored part; empty: the model's prefix token alone."""
    continuation: str
    conditioning: Conditioning = "bare"
    """`bare`: the continuation follows the context as it is; `spaced`: after a space (the
    minimal-pair tasks choose theirs; models/conditioning.py)."""


class Loglikelihood(Record):
    """Log-probability of a continuation."""

    logprob: float
    """Sum of token log-probabilities of the continuation."""
    mean_logprob: float
    """Per-token mean."""
    n_tokens: int
    """Number of continuation tokens."""
    greedy: bool
    """Whether every continuation token was the argmax."""
    cached: bool = False
    interrupted: bool = Field(default=False, exclude=True)
    """Not scored: the command was stopped first (as `Generation.interrupted`)."""


# --- run records ------------------------------------------------------------------------------


class ResponseRecord(Record):
    """A line of `responses.jsonl`: one (model, item, sample)."""

    model: str
    item_id: str
    task: str
    sample: int = 0
    raw: str | None
    """The model's raw output (None when the request failed), its first `raw_chars` characters
    only when it was longer than a record keeps (workflow/eval_score.py)."""
    raw_chars: int | None = None
    """The whole output's length in characters, when `raw` keeps only its start."""
    extracted: Any = None
    """The answer extracted from `raw`, or None when invalid."""
    rule: str | None = None
    """Name of the extraction rule that matched, or `invalid`."""
    invalid_reason: str | None = None
    """Why no answer could be read (`echo`, `refusal`, `hedge`, `conflict`, `no-answer`)."""
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    prompt_hash: str | None = None
    logprobs: dict[str, Any] | None = None
    """For minimal pairs: log-probabilities and token counts of both sentences."""
    choices: list[dict[str, Any]] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    """For minimal pairs asked as a forced choice (`raw` is None): per order (`good-first`,
    then `good-second`), the reply (`raw`), the number read (`extracted`, None when
    unread), the sentence it names (`chose`: `good` or `bad`), the rule and why unread."""


class ScoreRecord(Record):
    """A line of `scores.jsonl`: one (model, item)."""

    model: str
    item_id: str
    task: str
    gold: Any = None
    extracted: Any = None
    invalid: bool = False
    """The answer could not be extracted (it counts as wrong)."""
    invalid_reason: str | None = None
    """Why (`echo`, `refusal`, `hedge`, `conflict`, `no-answer`; `no-judgment` for a judged
    answer the judge could not score)."""
    scores: dict[str, float] = Field(default_factory=dict)
    """Metric name to value for this item, e.g. `{"acc": 1.0}`."""
    details: dict[str, Any] = Field(default_factory=dict)
    """What the task's aggregation needs besides the scores (e.g. M2 counts per reference)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Item metadata needed for breakdowns (category, level, language)."""


class SummaryRow(Record):
    """A line of `summary.json`."""

    model: str
    task: str
    n: int
    metric: str
    score: float | None
    invalid_rate: float


class Counts(Record):
    """How much work a command did; see the README's run-folder contract."""

    items: int = 0
    requests_sent: int = 0
    cache_hits: int = 0
    invalid: int = 0
    failed: int = 0
    """Answers (of the items in scope) whose request failed, or whose judge could not be
    reached, in this run."""
    not_asked: int = 0
    """Answers of the items in scope neither made nor failed: not reached before the command
    stopped (interrupted, or stopped by an error); the resumed run asks them."""
    shared: int = 0
    """Requests identical to another one of the run, asked once: the one call's answer served
    them all (counted neither in `requests_sent` nor in `cache_hits`)."""

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            items=self.items + other.items,
            requests_sent=self.requests_sent + other.requests_sent,
            cache_hits=self.cache_hits + other.cache_hits,
            invalid=self.invalid + other.invalid,
            failed=self.failed + other.failed,
            not_asked=self.not_asked + other.not_asked,
            shared=self.shared + other.shared,
        )

    def requests_line(self) -> str:
        """`N requests sent` and, when identical prompts were asked once, how many."""
        line = f"{self.requests_sent} requests sent"
        if self.shared:
            line += (
                f" ({self.shared} more {'was' if self.shared == 1 else 'were'} identical to "
                "one of them and asked once)"
            )
        return line


class InputChange(Record):
    """An input that decides answers, changed between two runs of one folder."""

    input: str
    """What changed: `prompts/NAME`, `rubrics/ID`, `endpoint/MODEL`, `judge`,
    `conditioning/TASK`, `recipe`, `source`."""
    before: str
    """Its hash (or value) when the earlier records were made."""
    after: str
    """Its hash (or value) now."""
    at: str
    """When the run that met the change began (UTC, ISO 8601)."""


class ManifestBase(Record):
    """What `manifest.json` holds for every kind of run."""

    run_id: str
    kind: Literal["build", "eval", "profile"]
    command: list[str]
    """The command line that made (or last resumed) the run."""
    recipe: str | None = None
    models: list[str] = Field(default_factory=list)
    """The models' names: spec without endpoint or transport options (`ModelSpec.label`)."""
    endpoints: dict[str, str] = Field(default_factory=dict)
    """Per model, the server it was asked on (its base URL, without credentials), or `local`."""
    seed: int
    versions: dict[str, str] = Field(default_factory=dict)
    hashes: dict[str, str] = Field(default_factory=dict)
    """Content hashes of the recipe, prompts, rubrics, source and dataset the run used."""
    status: Literal["complete", "partial"] = "partial"
    reason: str | None = None
    """Why a partial run stopped (None for a complete run)."""
    counts: Counts = Field(default_factory=Counts)
    started: str = ""
    finished: str | None = None
    tasks: dict[str, int] = Field(default_factory=dict)
    """Items per task, in dataset order."""
    changes: list[InputChange] = Field(default_factory=list)
    """Inputs found changed when the run was resumed with `--resume-changed=reask`."""
    set_aside: int = 0
    """Record lines moved to `set-aside.jsonl` (corrupt, repeated, out of step, or made under
    changed inputs), in all."""

    @field_serializer("command", "models")
    def _masked_list(self, values: list[str]) -> list[str]:
        """Written with every credential masked, however the manifest was filled."""
        return [redact(value) for value in values]

    @field_serializer("reason")
    def _masked_reason(self, reason: str | None) -> str | None:
        return None if reason is None else redact(reason)


class BuildManifest(ManifestBase):
    """`manifest.json` of a build run."""

    kind: Literal["build"] = "build"
    source: dict[str, Any] | None = None
    """The grammar source: path and number of points."""
    agents: Literal["on", "off"] | None = None
    stages: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Outcome counts per agent stage (planned, rewritten, generated, accepted, rejected,
    failed)."""
    flagged: int = 0
    """Records the build's filters flagged for review."""
    review: dict[str, Any] | None = None
    """The review file (name, rows) and the decisions imported into the run."""
    artifacts: dict[str, Any] | None = None
    """Extra files the recipe's bank builder wrote (e.g. how many M2 files)."""
    license: str | None = None
    """Licence of the items (an SPDX id), for `gramagents export`'s dataset card."""


class EvalManifest(ManifestBase):
    """`manifest.json` of an eval run."""

    kind: Literal["eval"] = "eval"
    dataset: dict[str, Any] | None = None
    """The dataset evaluated: path, format, items in scope, build run and recipe."""
    conditioning: dict[str, str] = Field(default_factory=dict)
    """Per minimal-pair task, how its sentences were scored: `spaced` (after a space, as
    lm-evaluation-harness's BLiMP tasks) or `bare` (as a text begins)."""
    pairs: dict[str, str] = Field(default_factory=dict)
    """Per minimal-pair task, how its pairs were asked: `loglik` (log-probabilities compared,
    under the task's own name) or `choice` (a forced choice in both orders, under the name
    `TASK-CHOICE`)."""
    random_baselines: dict[str, float] = Field(default_factory=dict)
    """Expected score of a uniform random answer, per task."""
    no_gold: dict[str, int] = Field(default_factory=dict)
    """Items per task that have no gold answer: asked and recorded, but not scored."""
    judge: dict[str, Any] | None = None
    """The rubric judge, when the dataset has judged tasks: `model` (its name),
    `requests_sent` (also counted in `counts.requests_sent`) and `cache_hits`."""


class ProfileManifest(ManifestBase):
    """`manifest.json` of a profile: a suite's builds and evals, and the statistics over them."""

    kind: Literal["profile"] = "profile"
    suite: dict[str, Any] | None = None
    """The suite: its name, the file it was read from and the file's sha256."""
    entries: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per suite entry: its build or dataset, the dataset evaluated, its eval run folder, the
    items per task evaluated and how its eval ended."""
    boot: int = 2000
    """Bootstrap resamples of every interval (and the seed is `seed`)."""


RunManifest = Annotated[BuildManifest | EvalManifest | ProfileManifest, Field(discriminator="kind")]
"""`manifest.json` of a run folder, of any kind (`runtime.run` reads and writes it)."""
