"""One cache file, read and written so that nothing in a cache folder is trusted.

An entry is `FORMAT`, its name, and an HMAC-SHA256 (under this user's key, `secret.py`) of
its kind, name and payload, then the payload. Only a regular file is read (a FIFO is refused,
never waited on; a symlink is not followed), and an entry whose MAC does not check is a miss:
the caller works the result out again and writes it anew. A write is atomic; a cache that
cannot be written because it is read-only costs the next run its speed, any other failure
(a full disk) is an error that names the file.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import stat
from pathlib import Path

from ..errors import UsageError
from ..write import write_atomic
from .secret import secret

FORMAT = b"profilegen-result-cache 2\n"
_MAC = hashlib.sha256().digest_size
# The largest entry read or written (the largest a registry makes is a few MiB): a planted
# file of gigabytes, sparse or not, is a miss instead of the process's memory.
MAX_ENTRY = 256 * 2**20
# A cache that is read-only (or gone meanwhile) is only slower; anything else is said.
_QUIET = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT})
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class CacheWriteError(UsageError):
    """A cache file that could not be written, named, with what to do about it."""

    def __init__(self, path: Path, exc: OSError, *, results: bool = True) -> None:
        reason = exc.strerror or str(exc)
        # Results are also left alone by --no-cache; patch files are cached whatever it says.
        skip = ", or run with --no-cache" if results else ""
        todo = (
            f"free some space there, point PROFILEGEN_CACHE at a folder with room{skip}"
            if exc.errno in _FULL
            else "see to what is in the way there (or its permissions), or point PROFILEGEN_CACHE "
            "at another folder"
        )
        super().__init__(f"cannot write the cache file {path}: {reason}; {todo}")
        self.path = path


def read_file(path: Path) -> bytes | None:
    """The bytes of a regular file of at most MAX_ENTRY bytes (no symlink followed, no FIFO
    waited on), else None."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_ENTRY + 1)
        return data if len(data) <= MAX_ENTRY else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _mac(key: bytes, kind: str, name: str, payload: bytes) -> bytes:
    digest = hmac.new(key, FORMAT + f"{kind}\0{name}\0".encode(), hashlib.sha256)
    digest.update(payload)
    return digest.digest()


def unseal(kind: str, name: str, data: bytes | None) -> bytes | None:
    """The payload of an entry written by `seal` for this kind and name, else None."""
    key = secret()
    head = FORMAT + name.encode() + b"\n"
    if key is None or data is None or not data.startswith(head):
        return None
    mac, payload = data[len(head) : len(head) + _MAC], data[len(head) + _MAC :]
    return payload if hmac.compare_digest(mac, _mac(key, kind, name, payload)) else None


def seal(kind: str, name: str, payload: bytes) -> bytes | None:
    """The entry for `payload`, or None when there is no key to sign it with."""
    key = secret()
    if key is None:
        return None
    return FORMAT + name.encode() + b"\n" + _mac(key, kind, name, payload) + payload


def read_sealed(kind: str, path: Path) -> bytes | None:
    """The payload of the entry at `path` (named by its file name), or None: a miss."""
    return unseal(kind, path.name, read_file(path))


def write_sealed(kind: str, path: Path, payload: bytes) -> None:
    """Writes the entry at `path`; raises CacheWriteError unless the cache is read-only."""
    data = seal(kind, path.name, payload)
    if data is not None and len(data) <= MAX_ENTRY:
        write_file(path, data)


def write_file(
    path: Path, data: bytes, *, durable: bool = False, results: bool = True, strict: bool = False
) -> None:
    """Writes a cache file atomically (its folder made private to this user); `results`
    False for files --no-cache does not skip (patch files); `strict` when the write is what
    was asked for (`cache add`), so that a read-only cache is an error too."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(path, data, durable=durable)
    except OSError as exc:
        if strict or exc.errno not in _QUIET:
            raise CacheWriteError(path, exc, results=results) from None
