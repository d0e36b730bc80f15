"""Versions of the packages that can change a run's results, for manifests."""

from __future__ import annotations

import os
import platform
import re
import sys
from importlib import metadata

PACKAGES = (
    "gramagents",
    "torch",
    "transformers",
    "langgraph",
    "langchain-openai",
    "openai",
    "instructor",
    "pydantic",
    "sentence-transformers",
)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _installed_by_folder_name() -> dict[str, str]:
    """Name to version, read off the `NAME-VERSION.dist-info` folders on `sys.path`.

    `metadata.version` parses each package's METADATA file, some of which hold a whole README
    (tens of milliseconds for the list above, before every run's first request); the folder
    name carries the same two fields. The first folder on the path wins, as for imports.
    """
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if folder.endswith(".dist-info"):
                name, _, version = folder[: -len(".dist-info")].partition("-")
                if version:
                    found.setdefault(_normalize(name), version)
    return found


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that matter, and Python's."""
    versions = {"python": platform.python_version()}
    by_folder = _installed_by_folder_name()
    for name in PACKAGES:
        version = by_folder.get(_normalize(name))
        if version is None:  # an egg or another layout: ask importlib
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        versions[name] = version
    return versions
