"""`cache add`: files downloaded by hand put into the patch-file cache, when the registry pins
them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..cache import write_file
from ..model.patch import PatchFile
from ..registry import Registry
from ..registry.files import NotRegular, file_kind, read_regular
from .patchfiles import blob_path, pinned_files, read_cached, sha256_hex


@dataclass(frozen=True)
class Cached:
    """A file `cache add` took: its sha256 and the patch files (`patch/path`) it is."""

    path: Path
    sha256: str
    owners: tuple[str, ...]

    def line(self) -> str:
        return f"cached {self.path} as {', '.join(self.owners)}"


@dataclass(frozen=True)
class Rejected:
    """A file `cache add` did not take, and why (the end of a sentence after its path)."""

    path: Path
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}"


def cache_add(registry: Registry, paths: list[Path]) -> list[Cached | Rejected]:
    """Copies each file into the cache when its sha256 is pinned; one answer per file, in order.

    Each is read with the bounded, non-blocking reader: a FIFO or a device is refused, not
    waited on, and no more is read than the largest pinned file. A cached copy that does not
    match its pin (a damaged or planted entry) is replaced; a cache that cannot be written is
    a CacheWriteError naming the file."""
    pins = pinned_files(registry)
    limit = max((f.size for owners in pins.values() for _p, f in owners), default=0)
    return [_add_one(path, pins, limit) for path in paths]


Pins = dict[str, list[tuple[str, PatchFile]]]


def _add_one(path: Path, pins: Pins, limit: int) -> Cached | Rejected:
    try:
        content, size = read_regular(path, limit)
    except OSError as exc:
        return Rejected(path, f"cannot read ({exc.strerror or exc})")
    except NotRegular as exc:
        return Rejected(path, f"is {file_kind(exc.mode)}, not a regular file")
    if len(content) > limit:
        return Rejected(
            path,
            f"{size:,} bytes, more than any patch file the registry pins ({limit:,} bytes at most)",
        )
    digest = sha256_hex(content)
    owners = pins.get(digest)
    if not owners:
        return Rejected(path, f"sha256 {digest} is not pinned by any patch in the registry")
    if read_cached(owners[0][1]) is None:  # absent, damaged, or not a regular file
        write_file(blob_path(digest), content, durable=True, results=False, strict=True)
    return Cached(path, digest, tuple(f"{p}/{f.path}" for p, f in owners))
