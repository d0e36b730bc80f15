"""Find recipes, prompts, rubrics and suites: the working directory first, packaged copies second.

A user overrides any packaged file by putting an edited copy at the same relative path
(`graphs/cpg.yaml`, `prompts/cpg/single.zh.md`, ...) in the directory they run from.

Names of resources often come from data (an item's `prompt.template`, a rubric an item names,
a template's `base:`), so a name is only ever looked up *inside* the resource folders: an
absolute path, a `..` part or a symlink that leads out of its folder is refused
(`ResourceRefused`). A file the user names on the command line (a recipe path, `gramagents
rubric check FILE`) is the user's own choice and is read where it is, by its caller.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Literal

from .errors import GramagentsError, InputError

Kind = Literal["graphs", "prompts", "rubrics", "suites"]

_PACKAGE_DIR = Path(__file__).resolve().parent


class ResourceRefused(GramagentsError):
    """A resource name that would read a file outside the resource folders."""

    def __init__(self, kind: Kind, name: str, why: str) -> None:
        self.kind = kind
        self.name = name
        self.why = why
        super().__init__(f"{kind[:-1]} '{name}' refused: {why}")


def search_roots(kind: Kind) -> list[Path]:
    """Folders searched for `kind`, in order of precedence."""
    roots = [Path.cwd() / kind, _PACKAGE_DIR / "_resources" / kind]
    # A source checkout (editable install) keeps the resources beside `src/`.
    checkout = _PACKAGE_DIR.parent.parent / kind
    if checkout not in roots:
        roots.append(checkout)
    return roots


def relative_name(kind: Kind, name: str) -> PurePosixPath:
    """`name` as a path relative to its kind's folder, or `ResourceRefused` saying why not.

    A name is a relative path of plain parts (`cpg/single.zh.md`); a leading `prompts/` (the
    kind's folder) is dropped. An absolute path is accepted only where it lies in a resource
    folder (`search_roots`), so that a packaged file can be named by its full path.
    """
    if not name or "\x00" in name:
        raise ResourceRefused(kind, name, "an empty name or one with a NUL character")
    if "\\" in name or PureWindowsPath(name).drive:
        raise ResourceRefused(kind, name, "names use '/' and no drive")
    path = PurePosixPath(name)
    if path.is_absolute():
        inside = _inside_a_root(kind, Path(name))
        if inside is None:
            raise ResourceRefused(
                kind, name, f"an absolute path outside the {kind} folders ({_looked(kind)})"
            )
        path = inside
    if any(part == ".." for part in path.parts):
        raise ResourceRefused(kind, name, f"'..' leads out of the {kind} folders")
    if path.parts[:1] == (kind,):
        path = PurePosixPath(*path.parts[1:])
    if not path.parts:
        raise ResourceRefused(kind, name, "names a folder, not a file")
    return path


def _inside_a_root(kind: Kind, path: Path) -> PurePosixPath | None:
    resolved = path.resolve()
    for root in search_roots(kind):
        if resolved.is_relative_to(root.resolve()):
            return PurePosixPath(resolved.relative_to(root.resolve()).as_posix())
    return None


def _looked(kind: Kind) -> str:
    return ", ".join(str(r) for r in search_roots(kind))


def find(kind: Kind, name: str) -> Path:
    """Path of the resource `name` (relative to its kind's folder), or a clear error.

    Raises:
        ResourceRefused: The name points outside the resource folders (see `relative_name`),
            or a file found for it is a symlink to a place outside its folder.
        GramagentsError: No resource folder has the file.
    """
    relative = relative_name(kind, name)
    for root in search_roots(kind):
        candidate = root / relative
        if not candidate.is_file():
            continue
        if not candidate.resolve().is_relative_to(root.resolve()):
            raise ResourceRefused(kind, name, f"{candidate} links to a file outside {root}")
        return candidate
    raise GramagentsError(f"{kind[:-1]} '{name}' not found (looked in {_looked(kind)})")


def recipe_path(name_or_path: str) -> Path:
    """The file of a recipe given as a path or a name (`cpg` means `graphs/cpg.yaml`)."""
    candidate = Path(name_or_path)
    if candidate.is_file():
        return candidate
    if not candidate.suffix:
        known = available_recipes()
        if name_or_path not in known:
            raise GramagentsError(
                f"unknown recipe '{name_or_path}' (known: {', '.join(known)}; or a recipe "
                "file's path, e.g. graphs/cpg.yaml)"
            )
        return find("graphs", f"{name_or_path}.yaml")
    raise InputError(candidate, "recipe file not found")


def available_recipes() -> list[str]:
    """Names of the recipes in the graph folders (the working directory's and the package's)."""
    return sorted({path.stem for root in search_roots("graphs") for path in root.glob("*.yaml")})


def read_text(path: Path) -> str:
    """Read a resource file as UTF-8 (a BOM is dropped)."""
    return path.read_text(encoding="utf-8-sig")


@lru_cache(maxsize=512)
def _hash_file(path: Path, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_hash(path: Path) -> str:
    """sha256 of a file's bytes, memoised on (path, mtime, size)."""
    st = path.stat()
    return _hash_file(path.resolve(), st.st_mtime_ns, st.st_size)
