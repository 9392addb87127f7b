"""Where profilegen's data lives: packaged templates and schemas, overrides, the user cache."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`templates` or `schema`: inside an installed wheel, else the source checkout."""
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    # Editable installs and a plain checkout keep them at the repository root.
    return _PACKAGE.parents[1] / name


def template_dirs(root: Path | None) -> list[Path]:
    """Search path for templates: the registry's own templates/ first, then ours."""
    dirs = []
    if root is not None and (root / "templates").is_dir():
        dirs.append(root / "templates")
    builtin = data_dir("templates")
    if builtin not in dirs:
        dirs.append(builtin)
    return dirs


def cache_root() -> Path:
    """The user cache (compiled templates, schemas, patch files): PROFILEGEN_CACHE or ~/.cache."""
    return Path(os.environ.get("PROFILEGEN_CACHE") or "~/.cache/profilegen").expanduser()


def cache_problem() -> str | None:
    """Why the user cache cannot be a folder (a file is in the way), else None: said at once,
    instead of as failed writes in worker threads."""
    folder = cache_root()
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            if candidate.is_dir():
                return None
            what = "is" if candidate == folder else f"is inside {candidate}, which is"
            return f"PROFILEGEN_CACHE={folder} {what} a file, not a folder"
    return None
