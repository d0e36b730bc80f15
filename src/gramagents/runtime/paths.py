"""Where gramagents keeps its own state, and the one way a file name is made from data."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path


def home() -> Path:
    """`$GRAMAGENTS_HOME`, or `~/.cache/gramagents` (converted models live under it)."""
    configured = os.environ.get("GRAMAGENTS_HOME")
    base = Path(configured) if configured else Path.home() / ".cache" / "gramagents"
    base.mkdir(parents=True, exist_ok=True)
    return base


def default_cache_path() -> Path:
    """The response cache: `$GRAMAGENTS_CACHE`, or `cache.sqlite` under `home()`."""
    configured = os.environ.get("GRAMAGENTS_CACHE")
    return Path(configured) if configured else home() / "cache.sqlite"


SAFE_NAME_BYTES = 100
"""Longest file-name stem `safe_name` makes, in UTF-8 bytes (file systems allow 255, and
callers add suffixes such as `.m2` or `.src.txt`)."""
_UNSAFE = re.compile(r"[^\w.+=@,-]+")
"""Runs of characters a name does not keep: separators, spaces, controls, `:*?"<>|` ..."""
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))]
)
"""Names Windows gives to devices, whatever their extension."""


def safe_name(text: str, taken: set[str] | None = None, limit: int = SAFE_NAME_BYTES) -> str:
    """A file name made from data (an item id, a model label), safe to join to a folder.

    The name has no separator, is neither `.` nor `..` nor hidden (no leading dot), is no
    device name, and is at most `limit` bytes of UTF-8. Where the text had to change, a short
    hash of the whole text is appended, so two different texts do not meet in one name.
    `taken` (the names already used in the folder, compared case-folded, as on file systems
    that ignore case) gets the new name; a name already in it gets `-2`, `-3`, ... appended.
    """
    text = unicodedata.normalize("NFC", text)
    name = _UNSAFE.sub("_", text).strip("._ ")
    if name.split(".")[0].casefold() in _RESERVED:
        name = f"_{name}"
    if not name or name != text or len(name.encode("utf-8")) > limit:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        name = f"{_cut(name, limit - 11)}-{digest}" if name else digest
    if taken is None:
        return name
    unique, n = name, 1
    while unique.casefold() in taken:
        n += 1
        unique = f"{_cut(name, limit - len(str(n)) - 1)}-{n}"
    taken.add(unique.casefold())
    return unique


def _cut(name: str, limit: int) -> str:
    """`name` cut to at most `limit` bytes of UTF-8, on a character boundary."""
    return name.encode("utf-8")[: max(limit, 0)].decode("utf-8", "ignore").rstrip("._ ")


def inside(folder: Path, name: str) -> Path | None:
    """`folder / name` when `name` (read from data) names a place inside `folder`, else None.

    None for an absolute path, a `..` part, a drive, or a path whose symlinks lead out.
    """
    relative = Path(name)
    if not name or "\x00" in name or relative.is_absolute() or relative.drive:
        return None
    if ".." in relative.parts or "\\" in name:
        return None
    path = folder / relative
    try:
        if not path.resolve().is_relative_to(folder.resolve()):
            return None
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return path
