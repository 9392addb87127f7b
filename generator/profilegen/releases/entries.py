"""One kept entry of the build cache: built once under a file lock, in a folder of its own
renamed into place when complete (a killed build never leaves half an entry), and its record
read back only from a regular file."""

from __future__ import annotations

import fcntl
import json
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..write import write_atomic

ENTRY_FILE = "build.json"
MAX_RECORD = 2**20  # a record is a few hundred bytes: a larger file is not one
T = TypeVar("T")


def read_record(folder: Path) -> dict[str, Any] | None:
    """The entry's record, or None where it is missing, not a regular file of a record's
    size, or not JSON (nested past the parser's depth included)."""
    path = folder / ENTRY_FILE
    try:
        found = path.lstat()
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_RECORD:
            return None  # a FIFO, a link or a huge file there is never read
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) else None


def write_record(staging: Path, info: dict[str, Any]) -> None:
    write_atomic(staging / ENTRY_FILE, json.dumps(info, indent=1).encode() + b"\n")


def kept(
    root: Path,
    key: str,
    complete: Callable[[Path], T | None],
    build: Callable[[Path], dict[str, Any]],
    make: Callable[[Path, dict[str, Any]], T],
    announce: Callable[[], None],
) -> T:
    """The entry `key` under `root`: found complete, else built now into a staging folder
    (`build` returns its record) and renamed into place; one process builds at a time."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = complete(root / key)
        if found is not None:
            return found
        announce()
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
        try:
            info = build(staging)
            shutil.rmtree(root / key, ignore_errors=True)  # an entry a crash left incomplete
            staging.rename(root / key)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return make(root / key, info)
