"""Shared fixtures. Tests never touch the network: models are the embedded SmolLM2 or a
local server on 127.0.0.1; converted model weights are reused across runs (GRAMAGENTS_HOME),
the response cache is fresh for every test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gramagents.runtime.retry import RetryPolicy

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TABLE = ROOT / "examples" / "cpg" / "grammar-points.jsonl"
EXAMPLE_CSV = ROOT / "examples" / "cpg" / "grammar-points-en.csv"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own response cache."""
    path = tmp_path / "cache.sqlite"
    monkeypatch.setenv("GRAMAGENTS_CACHE", str(path))
    return path


@pytest.fixture(autouse=True)
def threads_left_alone() -> Iterator[None]:
    """A command run in this process (CliRunner) turns on the refitting of torch's threads
    between batches; it ends with the test, so later tests compute as they were set up."""
    yield
    from gramagents.runtime.threads import stop_following

    stop_following()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty working directory (so `runs/` lands there)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def fast_retry() -> RetryPolicy:
    """Retries without real waiting."""
    return RetryPolicy(
        initial_backoff=0.01,
        max_backoff=0.05,
        jitter=0.0,
        max_attempts=3,
        max_rate_limit_attempts=5,
        deadline=30.0,
    )


@pytest.fixture
def fake_server() -> Iterator["FakeChatServer"]:  # noqa: F821
    from gramagents.testing.openai_server import FakeChatServer

    with FakeChatServer() as server:
        yield server


@pytest.fixture(scope="session")
def smollm2():
    """The embedded model's backend, loaded once for the whole session."""
    from gramagents.models import create_backend

    backend = create_backend("smollm2")
    backend.lm  # noqa: B018 - load now
    return backend


@pytest.fixture(scope="session")
def completions_server() -> Iterator["FakeChatServer"]:  # noqa: F821
    """The test server answering `/v1/completions` with SmolLM2's real prompt log-probabilities
    (float32), started once for the session; its scorer shares the weights that
    `smollm2?dtype=float32` loads in this process."""
    from gramagents.testing.openai_server import FakeChatServer
    from gramagents.testing.prompt_scorer import ModelScorer

    with FakeChatServer(scorer=ModelScorer.embedded("float32")) as server:
        yield server
