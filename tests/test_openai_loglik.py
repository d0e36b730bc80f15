"""Minimal pairs scored by an OpenAI-compatible server over `/v1/completions` (echo, logprobs):
how a reply is read, what a server without prompt log-probabilities gets, and that a server
computing real log-probabilities with the embedded model decides every example pair as the
local backend does, with the same scores."""

import asyncio
import json
import subprocess
import sys

import pytest

from gramagents.errors import BackendUnavailable, SpecError
from gramagents.models import BackendSettings, Model, create_backend, parse_spec
from gramagents.models.openai_loglik import NoPromptLogprobs, score_reply
from gramagents.records import LoglikelihoodRequest
from gramagents.testing.openai_server import FakeChatServer
from gramagents.testing.prompt_scorer import ScoredToken
from gramagents.workflow.eval import EvalOptions, run_eval

from .conftest import ROOT
from .test_conditioning import write_gec_pairs

BLIMP = ROOT / "examples" / "minimal-pairs" / "blimp"
CLIMP = ROOT / "examples" / "minimal-pairs" / "climp"
PREFIX = "<|im_start|>"  # SmolLM2's BOS: its tokenizer adds none, so the spec sends it
LOCAL = "smollm2?dtype=float32&device=cpu"


def reply(tokens, logprobs, offsets=None, top=None, prompt_tokens=None):
    """A completions reply listing `tokens`, as vLLM shapes one."""
    body = {
        "choices": [
            {
                "text": "".join(tokens),
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": logprobs,
                    "text_offset": offsets,
                    "top_logprobs": top,
                },
            }
        ]
    }
    if prompt_tokens is not None:
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": 1}
    return body


def test_the_scored_text_is_found_from_the_end_past_a_bos_the_server_added():
    # "<s>" is the server's own BOS: counted in its offsets, not part of the prompt we sent
    tokens = ["<s>", " The", " cat", " sleeps", ".", "\n"]
    body = reply(tokens, [None, -1.0, -2.0, -3.0, -0.5, -9.0], [0, 3, 7, 11, 18, 19], None, 5)
    scored = score_reply(body, len(" The cat sleeps."), max_tokens=1)
    assert (scored.logprob, scored.n_tokens) == (-6.5, 4)
    assert scored.mean_logprob == pytest.approx(-6.5 / 4)


def test_a_token_across_the_boundary_counts_and_cut_characters_stay_whole():
    # the context "Q:" and the scored "猫." (the cat's bytes come in two tokens, the first
    # listed empty); ":" merged with nothing, but "Q" and ":猫" would straddle
    tokens = ["Q", ":", "", "猫", "."]
    body = reply(tokens, [None, -1.0, -2.0, -3.0, -0.25], [0, 1, 2, 2, 3], None, 5)
    assert score_reply(body, len("猫."), max_tokens=0).n_tokens == 3
    straddled = reply(["Q", ":猫", "."], [None, -4.0, -0.5], [0, 1, 3], None, 3)
    scored = score_reply(straddled, len("猫."), max_tokens=0)
    assert (scored.logprob, scored.n_tokens) == (-4.5, 2)


def test_offsets_missing_or_unusable_fall_back_to_token_lengths():
    tokens = ["A", " b", " c", "!"]
    for offsets in (None, [-1, -1, -1, -1]):
        body = reply(tokens, [None, -1.0, -2.0, -7.0], offsets)
        assert score_reply(body, len(" b c"), max_tokens=1).logprob == -3.0


def test_greedy_is_read_from_top_logprobs():
    top = [None, {" b": -1.0}, {" c": -2.0, " d": -0.5}, {"!": -0.1}]
    body = reply(["A", " b", " c", "!"], [None, -1.0, -2.0, -0.1], None, top)
    assert not score_reply(body, len(" b c"), max_tokens=1).greedy
    top[2] = {" c": -2.0}
    assert score_reply(body, len(" b c"), max_tokens=1).greedy


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (reply(["The", " cat"], [None, -1.0]), "prefix="),
        ({"choices": [{"text": "The cat", "logprobs": None}]}, "logprobs are null"),
        (reply(["!"], [-0.1], [7], None, 3), "the prompt was not echoed"),
        ({"choices": []}, "no choices"),
    ],
)
def test_a_reply_without_the_prompts_log_probabilities_is_refused(body, words):
    with pytest.raises(NoPromptLogprobs, match=words):
        score_reply(body, len("The cat"), max_tokens=0)


class WordScorer:
    """A stand-in model for the server's own tests: one token per word, each -1.0."""

    def complete(self, prompt, max_tokens, top):
        words = prompt.replace(" ", "\0 ").split("\0")
        tokens = [ScoredToken(words[0], None, None)]
        tokens += [ScoredToken(w, -1.0, {w: -1.0}) for w in words[1:] + ["."] * max_tokens]
        return tokens, len(words)


def scoring_model(server, fast_retry, options=""):
    spec = f"openai:fake@{server.base_url}{options}"
    return Model(create_backend(spec, BackendSettings(concurrency=4, retry=fast_retry)))


async def score(model, requests):
    try:
        return await model.loglikelihood(requests)
    finally:
        await model.backend.aclose()


def test_the_request_echoes_the_prompt_with_logprobs_and_max_tokens_as_the_spec_says(fast_retry):
    request = LoglikelihoodRequest(context="", continuation="a b c", conditioning="spaced")
    with FakeChatServer(scorer=WordScorer()) as server:
        [one] = asyncio.run(score(scoring_model(server, fast_retry, "?prefix=<s>"), [request]))
        no_new = scoring_model(server, fast_retry, "?prefix=<s>&echo_max_tokens=0")
        asyncio.run(score(no_new, [request]))
        first, second = server.completion_bodies
    assert (one.logprob, one.n_tokens) == (-3.0, 3) and one.greedy
    assert first["prompt"] == "<s> a b c" and first["echo"] is True and first["logprobs"] == 1
    assert (first["max_tokens"], second["max_tokens"]) == (1, 0)


@pytest.mark.parametrize("scorer", [None, WordScorer()], ids=["no-endpoint", "null-logprobs"])
def test_a_server_without_prompt_logprobs_stops_with_one_line_naming_the_spec(scorer, fast_retry):
    request = LoglikelihoodRequest(context="", continuation="a b", conditioning="spaced")
    with FakeChatServer(scorer=scorer, prompt_logprobs=False) as server:
        model = scoring_model(server, fast_retry, "?prefix=<s>")
        with pytest.raises(BackendUnavailable) as caught:
            asyncio.run(score(model, [request]))
        sent = len(server.completion_bodies)
    message = str(caught.value)
    # the model is named without its endpoint; the endpoint is in what the message says of it
    assert message.startswith("--model 'openai:fake?prefix=<s>': ")
    assert f"{server.base_url}/completions" in message
    assert "gives no log-probabilities of the prompt" in message and "\n" not in message
    assert ("HTTP 404" if scorer is None else "logprobs are null") in message
    assert sent == 1  # refused, not retried


def test_the_spec_takes_echo_max_tokens_0_or_1_and_the_prefix_is_part_of_the_cache_key():
    with pytest.raises(SpecError, match="echo_max_tokens must be 0 or 1, not '2'"):
        create_backend("openai:m@http://127.0.0.1:9/v1?echo_max_tokens=2")
    request = LoglikelihoodRequest(context="", continuation="a b", conditioning="spaced")
    keys = {
        Model(create_backend(f"openai:{name}@http://127.0.0.1:9/v1{options}")).likelihood_keys(
            [request, request.model_copy(update={"conditioning": "bare"})]
        )[n]
        for name in ("m", "n")
        for options in ("", "?prefix=<s>")
        for n in (0, 1)
    }
    assert len(keys) == 8  # model, prefix and conditioning each change the key


def test_an_eval_on_a_server_without_completions_stops_before_the_run(tmp_path):
    with FakeChatServer() as server:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "gramagents",
                "eval",
                str(BLIMP),
                "--format",
                "blimp",
                "--model",
                f"openai:m@{server.base_url}",
                "--run-dir",
                str(tmp_path / "run"),
            ],
            capture_output=True,
            text=True,
        )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"--model 'openai:m': {server.base_url}/completions " in result.stderr
    assert "gives no log-probabilities of the prompt (HTTP 404" in result.stderr
    assert "ask them as a forced choice with --pairs choice" in result.stderr
    assert not (tmp_path / "run").exists()


# --- real log-probabilities: the embedded model behind the server ------------------------------


def responses(folder):
    lines = (folder / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["blimp", "climp", "gec"])
def test_a_server_decides_every_example_pair_as_the_local_backend(
    completions_server, tmp_path, fmt
):
    sources = {"blimp": BLIMP, "climp": CLIMP}
    path = sources[fmt] if fmt in sources else write_gec_pairs(tmp_path / "gec.jsonl")
    api = f"openai:smollm2@{completions_server.base_url}?prefix={PREFIX}"
    result = asyncio.run(
        run_eval(
            path,
            EvalOptions(
                models=[api, LOCAL],
                fmt="gramagents" if fmt == "gec" else fmt,
                run_dir=tmp_path / "run",
                use_cache=False,
                concurrency=8,
            ),
        )
    )
    records = responses(result.folder.path)
    api = parse_spec(api).label  # records name a model without its endpoint
    by_model = {
        label: {r["item_id"]: r for r in records if r["model"] == label} for label in (api, LOCAL)
    }
    assert len(by_model[api]) == len(by_model[LOCAL]) >= 10
    for item_id, local in by_model[LOCAL].items():
        remote = by_model[api][item_id]
        assert remote["error"] is None and remote["extracted"] == local["extracted"], item_id
        for key in ("good", "bad"):
            assert remote["logprobs"][key] == pytest.approx(local["logprobs"][key], abs=1e-3)
            assert remote["logprobs"][f"{key}_tokens"] == local["logprobs"][f"{key}_tokens"]


@pytest.mark.slow
def test_a_blimp_eval_runs_on_an_openai_model_from_the_command_line(completions_server, tmp_path):
    spec = f"openai:smollm2@{completions_server.base_url}?prefix={PREFIX}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "eval",
            str(BLIMP),
            "--format",
            "blimp",
            "--model",
            spec,
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    records = responses(tmp_path / "run")
    assert len(records) == 20 and {r["model"] for r in records} == {
        f"openai:smollm2?prefix={PREFIX}"
    }
    pairs = [
        json.loads(line)
        for path in sorted(BLIMP.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    sentences = [
        LoglikelihoodRequest(context="", continuation=pair[key], conditioning="spaced")
        for pair in pairs
        for key in ("sentence_good", "sentence_bad")
    ]
    local = asyncio.run(Model(create_backend(LOCAL)).loglikelihood(sentences))
    remote = sorted(r["logprobs"][key] for r in records for key in ("good", "bad"))
    assert remote == pytest.approx(sorted(s.logprob for s in local), abs=1e-3)
