"""The on-disk store: one file per result, under the user cache, written atomically.

Each entry is signed (`entry.py`: an HMAC-SHA256 under this user's key, kept outside the
cache), so a truncated, corrupt, foreign or planted file is simply a miss (and is rewritten):
only what this user's profilegen wrote is ever unpickled. Entries that hold pickled objects
are besides only read from a folder that the current user owns and nobody else may write to.
"""

from __future__ import annotations

import gc
import os
import pickle
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from ..resources import cache_root
from .entry import FORMAT, read_sealed, write_sealed
from .memory import InMemory

__all__ = ["FORMAT", "Store", "configure", "enabled"]
_STATE = {"enabled": True}
# The objects each kind of store keeps in this process (`Store(kind, keep=...)`).
_KEPT: dict[str, InMemory[tuple[Path, str], Any]] = {}


def configure(*, enabled: bool) -> None:
    """`--no-cache` for this run (PROFILEGEN_NO_CACHE=1 also turns it off)."""
    _STATE["enabled"] = enabled


def enabled() -> bool:
    return _STATE["enabled"] and os.environ.get("PROFILEGEN_NO_CACHE", "") in ("", "0")


T = TypeVar("T")


class Store:
    """Results of one kind (`registry`, `render`, `check`) by key.

    `keep`: for results that are immutable (or that their callers copy), this process keeps
    up to that many of the objects it stored or read, and hands them out again instead of
    reading them back (by folder and key, so a change of cache folder is a change of store).
    """

    def __init__(self, kind: str, keep: int = 0) -> None:
        self.kind = kind
        self.folder = cache_root() / "results" / kind
        self._kept = _KEPT.setdefault(kind, InMemory(keep)) if keep else None

    def get(self, key: str | None) -> bytes | None:
        """The bytes stored for `key` by this user's profilegen, else None (a miss)."""
        if key is None or not enabled():
            return None
        return read_sealed(self.kind, self.folder / key)

    def put(self, key: str | None, value: bytes) -> None:
        """Stores `value`: a read-only cache only costs the next run its speed; a full one
        is a CacheWriteError naming the file."""
        if key is None or not enabled():
            return
        write_sealed(self.kind, self.folder / key, value)

    def get_object(self, key: str | None) -> Any:
        """A pickled result, or None (also when the folder is not private to this user)."""
        if key is None or not enabled():
            return None
        if self._kept is not None and (kept := self._kept.get((self.folder, key))) is not None:
            return kept
        data = self.get(key) if _private(self.folder) else None
        if data is None:
            return None
        try:
            value = _unpickle(data)
        except Exception:  # a corrupt entry, or one from other code: recompute
            return None
        self._keep(key, value)
        return value

    def put_object(self, key: str | None, value: Any) -> None:
        if key is None or not enabled():
            return
        self.put(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        self._keep(key, value)

    def _keep(self, key: str, value: Any) -> None:
        if self._kept is not None:
            self._kept.put((self.folder, key), value)

    def remember(
        self,
        key: str | None,
        make: Callable[[], T],
        valid: Callable[[Any], bool],
        keep: Callable[[T], bool] = lambda _value: True,
    ) -> T:
        """The stored result for `key` when `valid` accepts it (a result of this code, not a
        corrupt or foreign entry), else `make()`, stored when `keep` says so."""
        hit = self.get_object(key)
        if valid(hit):
            return cast(T, hit)
        value = make()
        if keep(value):
            self.put_object(key, value)
        return value


def _unpickle(data: bytes) -> Any:
    """pickle.loads with the collector paused: an entry is tens of thousands of new
    containers, and the collections their allocation would start find nothing to free
    (a stored registry reads in a third of the time)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(data)
    finally:
        if paused:
            gc.enable()


def _private(folder: Path) -> bool:
    try:
        info = folder.stat()
    except OSError:
        return False
    getuid = getattr(os, "getuid", None)
    owned = getuid is None or info.st_uid == getuid()
    return owned and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
