"""Files on disk against what the lock (or the Hub) says they are, each hashed only once.

Hashing a 30 GB checkpoint takes minutes, so MODEL_DIR keeps a record of the files already
hashed: path, size, mtime, ctime, inode and sha256. A file whose stat still matches its
record is not read again; any write changes its ctime (even one that restores the mtime),
so a changed file is always hashed anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lockfile.lock import LOCK_NAME
from ..lockfile.paths import inside, name_problem, shown
from ..registry.safejson import load_json_file
from ..write import write_atomic

RECORD_NAME = ".profilegen-verified.json"
RECORD_VERSION = 1
_CHUNK = 8 * 2**20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def human(size: int | None) -> str:
    if size is None:
        return "size unknown"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def _stamp(info: os.stat_result) -> dict[str, int]:
    return {
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "ctime_ns": info.st_ctime_ns,
        "inode": info.st_ino,
    }


class Record:
    """The verified-files record of one MODEL_DIR (`.profilegen-verified.json`)."""

    def __init__(self, model_dir: Path) -> None:
        self.model_dir = model_dir
        self.path = model_dir / RECORD_NAME
        self.files: dict[str, dict[str, Any]] = {}
        self.changed = False
        self.hashed = 0  # files read and hashed by this run (the others came from the record)
        with contextlib.suppress(OSError, ValueError):
            data = load_json_file(self.path)
            if isinstance(data, dict) and data.get("version") == RECORD_VERSION:
                files = data.get("files")
                self.files = files if isinstance(files, dict) else {}

    def sha256(self, path: Path) -> str:
        """The file's sha256: from the record while its stat is unchanged, else hashed."""
        key = os.path.relpath(path, self.model_dir)
        info = path.stat()
        known = self.files.get(key)
        stamp = _stamp(info)
        if isinstance(known, dict) and all(known.get(k) == v for k, v in stamp.items()):
            digest = known.get("sha256")
            if isinstance(digest, str):
                return digest
        digest = sha256_file(path)
        self.files[key] = {**stamp, "sha256": digest}
        self.changed = True
        self.hashed += 1
        return digest

    def save(self) -> None:
        """Best effort: a read-only MODEL_DIR only means hashing again next time."""
        if not self.changed:
            return
        data = {"version": RECORD_VERSION, "files": dict(sorted(self.files.items()))}
        with contextlib.suppress(OSError):
            write_atomic(self.path, (json.dumps(data, indent=1) + "\n").encode())
        self.changed = False


@dataclass(frozen=True)
class Expected:
    """What a file must be: its size and sha256 (None where the source does not say)."""

    path: str
    size: int | None
    sha256: str | None


def check_files(
    target: Path, expected: tuple[Expected, ...], record: Record, source: str = LOCK_NAME
) -> list[str]:
    """Every file is there with the expected size and sha256; problems name the file."""
    problems: list[str] = []
    for f in expected:
        path = inside(target, f.path)
        if path is None:
            bad = name_problem(f.path) is not None
            where = f"{target}: file name {shown(f.path)}" if bad else f"{target / f.path}"
            problems.append(f"{where}: outside {target} (a link?), not opened")
            continue
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        size = path.stat().st_size
        if f.size is not None and size != f.size:
            problems.append(f"{path}: {size:,} bytes, {source} says {f.size:,}")
        elif f.sha256 is not None and (got := record.sha256(path)) != f.sha256:
            problems.append(
                f"{path}: sha256 {got[:16]}… does not match {source} ({f.sha256[:16]}…)"
            )
    return problems


def _on_disk(target: Path, files: tuple[str, ...]) -> list[Path]:
    if files:
        return [target / name for name in files if (target / name).is_file()]
    # A whole repository: everything below the target but the library's own state.
    return [
        p
        for p in target.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(target).parts)
    ]


def check_declared_size(
    key: str, target: Path, files: tuple[str, ...], declared: int, tolerance: float
) -> list[str]:
    """Without sha256 values, at least the bytes present must add up to the declared size."""
    present = _on_disk(target, files)
    total = sum(p.stat().st_size for p in present)
    if abs(total - declared) <= tolerance * declared:
        return []
    where = present[0] if len(present) == 1 else target
    return [
        f"{where}: {total:,} bytes, but {key} declares {human(declared)} "
        f"(±{tolerance:.0%}); {LOCK_NAME} has no sha256 for it, run `profilegen lock` online"
    ]
