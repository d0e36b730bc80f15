"""How minimal pairs are conditioned: the two conditionings, how a run chooses one, and that
each scores a pair exactly as lm-evaluation-harness's published task definitions do."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from gramagents.errors import GramagentsError, InputError
from gramagents.models import Model, create_backend
from gramagents.models.conditioning import scoring_text
from gramagents.models.scripted import ScriptedBackend
from gramagents.records import Item, LoglikelihoodRequest, PromptParts
from gramagents.sources.datasets import Dataset, read_dataset
from gramagents.tasks import get_task
from gramagents.workflow.eval import EvalOptions, run_eval
from gramagents.workflow.pair_conditioning import pair_conditionings

from .conftest import ROOT

BLIMP = ROOT / "examples" / "minimal-pairs" / "blimp"
CLIMP = ROOT / "examples" / "minimal-pairs" / "climp"
GEC_ITEMS = ROOT / "examples" / "gec" / "grammar-items.jsonl"


@pytest.mark.parametrize(
    ("context", "conditioning", "expected"),
    [
        ("", "spaced", ("", " The cat sleeps.")),
        ("", "bare", ("", "The cat sleeps.")),
        ("Which is right?", "spaced", ("Which is right?", " The cat sleeps.")),
        ("Which is right?", "bare", ("Which is right?", "The cat sleeps.")),
        # trailing whitespace of the context goes with the scored text, as in lm-eval
        ("Answer: ", "bare", ("Answer:", " The cat sleeps.")),
        ("Answer:\n ", "spaced", ("Answer:", "\n  The cat sleeps.")),
    ],
)
def test_scoring_text_puts_the_delimiter_and_moves_trailing_space(context, conditioning, expected):
    request = LoglikelihoodRequest(
        context=context, continuation="The cat sleeps.", conditioning=conditioning
    )
    text = scoring_text(request)
    assert (text.context, text.continuation) == expected


def test_the_conditioning_is_part_of_the_cache_key():
    ScriptedBackend.register("silent", lambda request: "")
    model = Model(create_backend("scripted:silent"))
    keys = model.likelihood_keys(
        [
            LoglikelihoodRequest(context="", continuation="猫在睡觉。", conditioning=how)
            for how in ("spaced", "bare")
        ]
    )
    assert keys[0] != keys[1]


def pair_item(id_: str, task: str, **extra) -> Item:
    return Item(
        id=id_,
        task=task,
        prompt=PromptParts(template="raw.md", vars={"good": "A b.", "bad": "A c.", **extra}),
        answer="good",
    )


def chosen(items: list[Item], override: str | None = None) -> dict[str, str]:
    dataset = Dataset(
        path=Path("dataset.jsonl"),
        items=items,
        digest="x",
        lines={it.id: n for n, it in enumerate(items, 1)},
    )
    tasks = {it.task: get_task(it.task) for it in items}
    pair_tasks = sorted(t for t, spec in tasks.items() if spec.mode == "loglikelihood")
    return pair_conditionings(dataset, items, tasks, pair_tasks, override)


def test_each_task_has_its_default_items_may_name_one_and_the_option_overrides_both():
    items = [
        pair_item("b1", "BLIMP"),
        pair_item("c1", "CLIMP"),
        pair_item("g1", "GEC-PAIR", conditioning="bare"),
        pair_item("g2", "GEC-PAIR", conditioning="bare"),
    ]
    assert chosen(items) == {"BLIMP": "spaced", "CLIMP": "bare", "GEC-PAIR": "bare"}
    assert chosen(items, "spaced") == {"BLIMP": "spaced", "CLIMP": "spaced", "GEC-PAIR": "spaced"}
    assert chosen([]) == {}


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"conditioning": "lm-eval"}, "'lm-eval' is not one of spaced, bare"),
        ({"conditioning": "spaced"}, "two conditionings (bare and spaced)"),
    ],
)
def test_a_bad_or_mixed_conditioning_in_the_items_names_line_and_field(extra, words):
    items = [pair_item("g1", "GEC-PAIR", conditioning="bare"), pair_item("g2", "GEC-PAIR", **extra)]
    with pytest.raises(InputError) as caught:
        chosen(items)
    assert (caught.value.line, caught.value.field) == (2, "conditioning")
    assert words in str(caught.value)


def test_the_command_line_refuses_an_unknown_conditioning_in_one_line(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "eval",
            str(BLIMP),
            "--format",
            "blimp",
            "--conditioning",
            "lm-eval",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--conditioning: 'lm-eval' is not one of spaced, bare" in result.stderr
    assert not (tmp_path / "run").exists()


def test_an_unknown_conditioning_option_is_refused_even_without_pairs():
    with pytest.raises(GramagentsError, match="'lm-eval' is not one of spaced, bare"):
        chosen([], "lm-eval")


# --- against lm-evaluation-harness, on the embedded model ---------------------------------------


def lm_eval_requests(template: str, pairs: list[tuple[str, str]], folder: Path):
    """lm-eval's own requests for `pairs` under its published task template (data aside)."""
    import lm_eval
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    data = folder / "pairs.jsonl"
    data.write_text(
        "".join(
            json.dumps({"sentence_good": g, "sentence_bad": b}, ensure_ascii=False) + "\n"
            for g, b in pairs
        ),
        encoding="utf-8",
    )
    config = folder / "task.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "include": str(Path(lm_eval.__file__).parent / "tasks" / template),
                "task": "gramagents_pairs",
                "dataset_path": "json",
                "dataset_name": None,
                "dataset_kwargs": {
                    "data_files": {"train": str(data)},
                    "cache_dir": str(folder / "datasets"),
                },
            }
        ),
        encoding="utf-8",
    )
    task = ConfigurableTask(config=load_yaml(config))
    task.build_all_requests(limit=None, rank=0, world_size=1)
    return task, sorted(task.instances, key=lambda i: (i.doc_id, i.idx))


@pytest.fixture(scope="module")
def lm_eval_models():
    """lm-eval's HFLM on the embedded model (float32), batching 8 and one by one."""
    from lm_eval.models.huggingface import HFLM
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from gramagents.models.embedded import GGUF_FILE, embedded_folder
    from gramagents.models.hf_load import converted_gguf_folder

    folder = converted_gguf_folder(embedded_folder(), GGUF_FILE)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    return [HFLM(pretrained=model, tokenizer=tokenizer, batch_size=size) for size in (8, 1)]


def write_gec_pairs(path: Path) -> Path:
    """The first example grammar items' pairs as GEC-PAIR items (no conditioning named)."""
    lines = []
    for line in GEC_ITEMS.read_text(encoding="utf-8").splitlines()[:5]:
        point = json.loads(line)
        for n, pair in enumerate(point["pairs"]):
            vars_ = {"good": pair["correction"], "bad": pair["ungrammatical"]}
            lines.append(
                json.dumps(
                    {
                        "id": f"GEC-PAIR/{point['id']}-{n}",
                        "task": "GEC-PAIR",
                        "prompt": {"template": "raw.md", "vars": vars_},
                        "answer": "good",
                        "meta": {"point": point["id"], "level": point["level"]},
                    }
                )
            )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fmt", "source", "option", "template"),
    [
        # the defaults, against the definition each follows
        ("blimp", BLIMP, None, "blimp/_template_yaml"),
        ("climp", CLIMP, None, "zhoblimp/_template_yaml"),
        ("gramagents", "gec", None, "blimp/_template_yaml"),
        # and the other conditioning, against the definition that uses it
        ("blimp", BLIMP, "bare", "zhoblimp/_template_yaml"),
        ("climp", CLIMP, "spaced", "blimp/_template_yaml"),
    ],
)
def test_a_pair_is_scored_exactly_as_lm_evals_published_task_scores_it(
    tmp_path, monkeypatch, lm_eval_models, fmt, source, option, template
):
    from gramagents.models.hf import HFBackend

    path = write_gec_pairs(tmp_path / "gec.jsonl") if source == "gec" else source
    items = read_dataset(path, fmt).items
    # What the eval scores: each request, and the token ids it becomes.
    ours: dict[str, tuple[LoglikelihoodRequest, tuple[list[int], list[int]]]] = {}
    encode = HFBackend.encode_pair

    def spy(self, request):
        ours[request.continuation] = (request, encode(self, request))
        return ours[request.continuation][1]

    monkeypatch.setattr(HFBackend, "encode_pair", spy)
    result = asyncio.run(
        run_eval(
            path,
            EvalOptions(
                models=["smollm2?dtype=float32"],
                fmt=fmt,
                run_dir=tmp_path / "run",
                use_cache=False,
                conditioning=option,
            ),
        )
    )
    assert set(result.manifest.conditioning.values()) == {
        option or get_task(items[0].task).conditioning
    }
    responses = {
        r["item_id"]: r
        for r in map(json.loads, (tmp_path / "run" / "responses.jsonl").read_text().splitlines())
    }

    # What lm-eval scores: its task's requests, and the token ids its HFLM makes of them.
    pairs = [(i.prompt.vars["good"], i.prompt.vars["bad"]) for i in items]
    task, instances = lm_eval_requests(template, pairs, tmp_path)
    assert [i.doc["sentence_good"] for i in instances[::2]] == [g for g, _ in pairs]
    batched, single = lm_eval_models
    theirs: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    score_tokens = batched._loglikelihood_tokens

    def record(requests, **kwargs):
        for arguments, context_ids, continuation_ids in requests:
            theirs[arguments] = (list(context_ids), list(continuation_ids))
        return score_tokens(requests, **kwargs)

    monkeypatch.setattr(batched, "_loglikelihood_tokens", record)
    scored = batched.loglikelihood(instances, disable_tqdm=True)
    sentences = [s for pair in pairs for s in pair]
    assert len(instances) == len(sentences) == len(scored)
    for sentence, instance in zip(sentences, instances, strict=True):
        # the same tokens, cut in the same place
        assert ours[sentence][1] == theirs[instance.arguments]
    for n, item in enumerate(items):
        response = responses[item.id]
        for offset, key in enumerate(("good", "bad")):
            tokens = len(theirs[instances[2 * n + offset].arguments][1])
            assert response["logprobs"][f"{key}_tokens"] == tokens
            # batches of other shapes round float32 sums differently in their last bits
            # (lm-eval's own batch sizes 1 to 32 differ by up to 6e-5 on these sentences)
            assert response["logprobs"][key] == pytest.approx(
                scored[2 * n + offset][0], rel=1e-5, abs=1e-4
            )
        # and the same decision as lm-eval's own scoring of its task
        decision = task.process_results(instances[2 * n].doc, scored[2 * n : 2 * n + 2])
        assert (response["extracted"] == "good") == bool(decision["acc"])
    # One sequence at a time on both sides, nothing in the way: the same numbers.
    alone = create_backend("smollm2?dtype=float32&prefix_sharing=false&batch_size=1")
    mine = asyncio.run(Model(alone).loglikelihood([ours[s][0] for s in sentences]))
    for mine_one, (logprob, _) in zip(
        mine, single.loglikelihood(instances, disable_tqdm=True), strict=True
    ):
        assert mine_one.logprob == pytest.approx(logprob, abs=1e-4)
