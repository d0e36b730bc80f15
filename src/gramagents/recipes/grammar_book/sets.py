"""Translation sets beside the generated pairs (paper §3.3, Table 1: MIXED).

The paper translates its generated pairs (G2040), FLORES-200's sentences and a set of long
news sentences (LONG300) together, as MIXED. A set is given by path in the recipe
(`GB-TRANSLATE: {sets: [...]}`) in FLORES-200's own layout: one file per language, one
sentence per line, line N of every file the same sentence, in a folder per split:

    flores200_dataset/devtest/eng_Latn.devtest     (FLORES-200)
    flores200_dataset/devtest/ltz_Latn.devtest
    flores101_dataset/devtest/ltz.devtest          (FLORES-101's older names)

`path` is the dataset folder (holding `devtest/`) or the split folder itself; relative paths
are read from the folder the command runs in. Nothing is downloaded: the files are read where
they are. Any set of one's own in the same layout is read the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...api import InputError, read_utf8

GENERATED = "G"
"""The set name of the generated sentence pairs (the paper's G2040)."""


class TranslationSet(BaseModel):
    """A translation set in FLORES-200's layout."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    """How reports name it (e.g. FLORES200, LONG300)."""
    path: str
    """The dataset folder (holding the split's folder) or the split's folder."""
    split: Literal["dev", "devtest"] = "devtest"
    english: str = "eng_Latn"
    """The English file's language code (FLORES-101: `eng`)."""
    target: str | None = None
    """The book's language's file code (e.g. `ltz_Latn`); None: the one other language."""
    size: int | None = Field(default=None, ge=1)
    """Read only the first N sentences."""


@dataclass(frozen=True)
class SetPairs:
    """The sentences of a set: English and the book's language, line by line."""

    name: str
    english: list[str]
    target: list[str]
    files: tuple[str, str]


def _folder(spec: TranslationSet) -> Path:
    root = Path(spec.path).expanduser()
    if (root / spec.split).is_dir():
        return root / spec.split
    if root.is_dir():
        return root
    raise InputError(root, f"translation set {spec.name}: folder not found")


def _file(folder: Path, code: str, split: str, spec: TranslationSet) -> Path:
    for name in (code, code.split("_")[0]):  # FLORES-200's eng_Latn, FLORES-101's eng
        path = folder / f"{name}.{split}"
        if path.is_file():
            return path
    raise InputError(folder / f"{code}.{split}", f"translation set {spec.name}: file not found")


def _target(folder: Path, spec: TranslationSet) -> Path:
    if spec.target is not None:
        return _file(folder, spec.target, spec.split, spec)
    english = {spec.english, spec.english.split("_")[0]}
    others = sorted(p for p in folder.glob(f"*.{spec.split}") if p.stem not in english)
    if len(others) != 1:
        listed = ", ".join(p.name for p in others[:5]) or "none"
        raise InputError(
            folder,
            f"translation set {spec.name}: {len(others)} files besides English ({listed}); "
            "name the book's language with `target` (e.g. ltz_Latn)",
        )
    return others[0]


def _lines(path: Path) -> list[str]:
    text = read_utf8(path).replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise InputError(path, "an empty line: one sentence per line", line=number)
    return [line.strip() for line in lines]


def read_set(spec: TranslationSet) -> SetPairs:
    """The English and target sentences of a set (one line each, the same count)."""
    folder = _folder(spec)
    english_file = _file(folder, spec.english, spec.split, spec)
    target_file = _target(folder, spec)
    english, target = _lines(english_file), _lines(target_file)
    if len(english) != len(target):
        raise InputError(
            target_file,
            f"{len(target)} sentences, but {english_file.name} has {len(english)}: "
            "line N of each file must be the same sentence",
        )
    if spec.size is not None:
        english, target = english[: spec.size], target[: spec.size]
    return SetPairs(spec.name, english, target, (str(english_file), str(target_file)))
