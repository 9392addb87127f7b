"""The only module that writes project files: atomically, and only when content changed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def write_atomic(
    path: Path, content: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Temp file in the same folder, fsync, rename: readers never see half a file.

    `durable=False` skips the fsync, for files that may be lost in a crash but must never be
    torn (cache entries: a reader checks them and recomputes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is not None:
            Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_files(files: Mapping[Path, bytes]) -> list[Path]:
    """Writes every file whose content differs; returns those written, sorted."""
    changed = []
    for path in sorted(files):
        content = files[path]
        if path.is_file() and path.read_bytes() == content:
            continue
        write_atomic(path, content)
        changed.append(path)
    return changed
