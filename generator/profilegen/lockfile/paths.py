"""File names that come from the Hub (or from the lock that recorded them): each is a plain
relative path that stays inside the model folder, or it is refused before anything is
recorded, downloaded or opened.

A Hub answer is input like any other: `../../../../tmp/x`, an absolute path, a backslash, a NUL
or an empty name would otherwise become a path outside MODEL_DIR, or two names for one file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# Longer than any real repository path (the Hub caps them well below this).
MAX_NAME = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# `C:x` leaves the folder where a rig reads it through Windows (WSL2 mounts MODEL_DIR so).
_DRIVE = re.compile(r"^[A-Za-z]:")
# Sizes beyond this are no file a Hub holds (8 PiB); sha256 values are 64 lowercase hex digits.
MAX_FILE_SIZE = 2**53
_SHA256 = re.compile(r"[0-9a-f]{64}")


def name_problem(name: object) -> str | None:
    """Why `name` is no file name inside a model folder (None: it is one)."""
    if not isinstance(name, str):
        return "is not a file name"
    if not name:
        return "is empty"
    if len(name) > MAX_NAME:
        return f"is longer than {MAX_NAME:,} characters"
    if "\0" in name:
        return "holds a NUL byte"
    if _CONTROL.search(name):
        return "holds a control character"
    if "\\" in name:
        return "holds a backslash"
    if name.startswith("/"):
        return "is an absolute path"
    parts = name.split("/")
    if any(_DRIVE.match(part) for part in parts):
        return "is a Windows drive path"
    if "" in parts:
        return "has an empty segment"
    if "." in parts or ".." in parts:
        return "has a '.' or '..' segment"
    return None


def shown(name: object) -> str:
    """A name as a message quotes it: escaped, and cut short."""
    text = ascii(name)
    return text if len(text) <= 80 else text[:77] + "..."


def listing_problems(names: Iterable[object]) -> list[str]:
    """Sentences about the names of one listing that escape the folder or repeat."""
    problems = []
    seen: set[object] = set()
    for name in names:
        problem = name_problem(name)
        if problem is not None:
            problems.append(f"file name {shown(name)} {problem}: it would leave the model folder")
        elif name in seen:
            problems.append(f"file name {shown(name)} is listed twice")
        seen.add(name if isinstance(name, str) else id(name))
    return problems


def size_problem(size: object) -> str | None:
    if size is None:
        return None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_FILE_SIZE:
        return "has no size a file can have"
    return None


def sha256_problem(sha: object) -> str | None:
    if sha is None or (isinstance(sha, str) and _SHA256.fullmatch(sha)):
        return None
    return "has a malformed sha256"


def inside(folder: Path, name: str) -> Path | None:
    """`folder / name` when it is a plain name that resolves inside `folder` (links followed,
    the folder's own included), else None: such a path is never opened."""
    if name_problem(name) is not None:
        return None
    path = folder / name
    try:
        base = folder.resolve()
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return path if resolved.is_relative_to(base) and resolved != base else None
