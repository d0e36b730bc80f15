"""What the `gramagents` command sets for its whole process, and library calls leave alone."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from .redact import RedactingFilter
from .runtime.memory import tuned_collector

QUIET = {
    "TOKENIZERS_PARALLELISM": "false",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}
"""Environment a command sets (unless the user did) so libraries draw no bars or advice."""


@contextmanager
def command_process() -> Iterator[None]:
    """Set up the process for one command: environment, logging, the collector's tuning.

    Progress bars and advisory warnings of the model libraries would break the command's own
    progress display; instructor logs every re-ask of an invalid answer, which the run
    records itself; bulk reading and evaluating run without the collector's repeated walks
    (`runtime/memory.py`).
    """
    for name, value in QUIET.items():
        os.environ.setdefault(name, value)
    logging.basicConfig(format="%(message)s", level=logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    logging.getLogger("gramagents").setLevel(logging.INFO)
    for name in ("instructor", "instructor.v2", "instructor.v2.retry"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with tuned_collector():
        yield
