"""Digests of what a result depends on: input files by their bytes, our code by its files.

Only regular files are fingerprinted. A symlink, FIFO, device or oversized file anywhere in
an input tree means no digest at all: the caller then takes the uncached path, where the
loader reports such entries as findings (and never blocks on a FIFO).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..resources import data_dir
from .memory import InMemory

# Larger inputs are not fingerprinted (the registry refuses files this big anyway).
MAX_INPUT_FILE = 16 * 2**20
_PACKAGE = Path(__file__).resolve().parents[1]
_CODE: list[str] = []


class Unfingerprintable(Exception):
    """An input entry that is not a plain, bounded, regular file."""


def code_digest() -> str:
    """profilegen's own code and packaged data (`code_files_digest`): any edit to a module,
    template or schema (an editable install) or a new version changes it; computed once per
    process."""
    if not _CODE:
        _CODE.append(code_files_digest((_PACKAGE, data_dir("templates"), data_dir("schema"))))
    return _CODE[0]


def code_files_digest(bases: tuple[Path, ...]) -> str:
    """The regular files under these folders, by path, size and modification time. Bytecode
    does not count, nor do folders themselves: a folder's time changes when Python first
    writes its __pycache__ there, which must not change the digest."""
    h = hashlib.sha256()
    for base in bases:
        for path in sorted(base.rglob("*")):
            if path.suffix == ".pyc" or "__pycache__" in path.parts:
                continue
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                continue
            h.update(f"{path.relative_to(base)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return h.hexdigest()


def tree_digest(root: Path, names: tuple[str, ...]) -> str:
    """The bytes of every file under root/<name> (folders or files; absent ones count as
    absent), with their relative paths, and every folder there by its path (an empty folder
    is something the loader reports). Raises Unfingerprintable."""
    h = hashlib.sha256()
    for name in names:
        top = os.fspath(root / name)
        skip = len(top) - len(os.fspath(Path(name)))  # what root adds in front
        h.update(f"\1{name}\n".encode())
        # Paths stay strings here: a tree of a thousand files is walked on every run.
        for path, is_folder in _walk(top):
            # A name's own bytes (os.fsencode): one that is not UTF-8 is still a name.
            rel = os.fsencode(path[skip:].replace(os.sep, "/"))
            if is_folder:
                h.update(b"d" + rel + b"\0")
            else:
                h.update(b"f" + rel + b"\0" + _content_digest(path))
    return h.hexdigest()


# A file's digest, in this process, by what its status says of it (device, inode, size,
# modification time), for files that had not changed for RACY_NS when they were read: a file
# written within the clock's granularity of the read could change again with the same
# status, so it is always read. The change time is left out, as linking a file changes it
# (a hard-linked copy of a tree is still the same bytes); a writer that puts an old
# modification time back on a file it rewrote in place, while this process runs, is not seen.
RACY_NS = 3 * 10**9
_KNOWN: InMemory[tuple[int, ...], bytes] = InMemory(100_000)


def _content_digest(path: str) -> bytes:
    """The sha256 of the file's bytes, read again only when its status changed."""
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    status = None if info is None else (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if status is not None and (known := _KNOWN.get(status)) is not None:
        return known
    data = _read(path)
    digest = hashlib.sha256(data).digest()
    settled = time.time_ns() - RACY_NS
    if status is not None and status[3] < settled:
        _KNOWN.put(status, digest)
    return digest


def _walk(top: str) -> list[tuple[str, bool]]:
    """top and every entry below it, each with whether it is a folder."""
    try:
        info = os.lstat(top)
    except FileNotFoundError:
        return []
    if stat.S_ISREG(info.st_mode):
        return [(top, False)]
    if not stat.S_ISDIR(info.st_mode):
        raise Unfingerprintable(top)
    out: list[tuple[str, bool]] = [(top, True)]
    with os.scandir(top) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                out += _walk(entry.path)
            elif entry.is_file(follow_symlinks=False):
                out.append((entry.path, False))
            else:
                raise Unfingerprintable(entry.path)
    return out


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_INPUT_FILE:
            raise Unfingerprintable(path)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Inputs:
    """What one result depends on: trees under the project root, and other words."""

    root: Path
    trees: tuple[str, ...]
    words: tuple[str, ...] = field(default=())

    def key(self) -> str | None:
        """The cache key, or None when an input cannot be fingerprinted (no caching)."""
        try:
            tree = tree_digest(self.root, self.trees)
        except (Unfingerprintable, OSError):
            return None
        h = hashlib.sha256(f"{code_digest()}\0{tree}\0".encode())
        h.update("\0".join(self.words).encode())
        return h.hexdigest()
