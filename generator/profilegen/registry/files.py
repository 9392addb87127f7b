"""Reading files of a registry checkout: only regular files inside the root, and only so much.

A registry comes from pull requests. A symlink may point at a secret outside the checkout, a
FIFO blocks a reader forever and a device never ends, so each path is resolved and refused
unless it stays inside the root, and each file is opened without blocking and checked to be a
regular file of bounded size before a byte is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Registry files are a few kB; vendored patch files a few hundred kB at most.
MAX_REGISTRY_FILE = 256 * 1024
MAX_VENDORED_FILE = 16 * 2**20


class Refused(Exception):
    """Why a path is not read, as the end of a sentence that starts with its name."""


def file_kind(mode: int) -> str:
    """What a non-regular directory entry is, in words."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def foreign(name: str) -> str | None:
    """A name that is not UTF-8 (bytes the file system allows, decoded as surrogates) with
    those bytes escaped (`\\xff`), for a message; None for a name that is UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(name).decode("utf-8", errors="backslashreplace")
    return None


# The one dot file a registry folder may hold unreported: an empty `.gitkeep`, which keeps an
# otherwise empty folder in git (`profilegen init` writes one into each empty kind folder).
# Any other hidden entry (an editor's swap file, a `.x.yaml`, a dot folder) is reported like
# every stray file: a reviewer's file listing may hide it, and nothing reads it.
KEPT_EMPTY = ".gitkeep"
HIDDEN = "is a hidden file"


def kept_empty(entry: Path) -> bool:
    """True for an empty regular `.gitkeep` (not a link), the dot file left unreported."""
    if entry.name != KEPT_EMPTY:
        return False
    try:
        info = entry.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def hidden(entry: Path) -> bool:
    """A dot file or folder other than the kept `.gitkeep`: a stray entry to report."""
    return entry.name.startswith(".") and not kept_empty(entry)


OUTSIDE = "resolves outside the repository (a symlink?); only files inside it are read"
LOOP = "is a symlink loop"


def escapes(root: Path, path: Path) -> str | None:
    """Why `path`, every symlink followed, does not stay inside `root` (None: it does)."""
    if _plainly_inside(root, path):
        return None
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError for a loop
        return LOOP
    return None if resolved.is_relative_to(root.resolve()) else OUTSIDE


def _plainly_inside(root: Path, path: Path) -> bool:
    """True when `path` is written under `root` and no part of it below `root` is a link (nor
    `..`), so that it resolves inside whatever `root` resolves to. Only the parts below the
    root are looked at; anything else is left to a full resolve."""
    top = root.parts
    if path.parts[: len(top)] != top:
        return False
    parts = path.parts[len(top) :]
    if not parts or ".." in parts:
        return False
    current = os.fspath(root)
    for part in parts:
        current = f"{current}{os.sep}{part}"
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def check_entry(root: Path, path: Path) -> str | None:
    """Why `path` cannot be read as a file (refused or not a regular file), or None."""
    if escape := escapes(root, path):
        return escape
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return "is a dangling symlink" if path.is_symlink() else f"cannot be read ({exc.strerror})"
    return None if stat.S_ISREG(mode) else f"is {file_kind(mode)}, not a regular file"


class NotRegular(Exception):
    """An opened path that is not a regular file (a FIFO, a device…); `mode` says which."""

    def __init__(self, mode: int) -> None:
        super().__init__(file_kind(mode))
        self.mode = mode


def read_regular(path: Path, limit: int, offset: int = 0) -> tuple[bytes, int]:
    """At most `limit + 1` bytes of a regular file from `offset` on, and its size: the one
    reader of local files profilegen does not own (registry files, `cache add`, checkpoint
    files for `model add`). Opening never blocks (a FIFO is refused, not waited on), a device
    is refused, and only the opened file is trusted: a path swapped after a check is caught
    here. Raises OSError or NotRegular."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(info.st_mode)
        if offset:
            handle.seek(offset)
        data = handle.read(limit + 1)
    return data, max(info.st_size, offset + len(data))


def read_inside(root: Path, path: Path, limit: int) -> bytes:
    """The bytes of a regular file inside `root` of at most `limit` bytes, else Refused."""
    problem = check_entry(root, path)
    if problem is not None:
        raise Refused(problem)
    try:
        data, size = read_regular(path, limit)
    except OSError as exc:
        raise Refused(f"cannot be read ({exc.strerror})") from None
    except NotRegular as exc:
        raise Refused(f"is {file_kind(exc.mode)}, not a regular file") from None
    if len(data) > limit:
        raise Refused(f"is {size:,} bytes, more than the {limit // 1024:,} KiB profilegen reads")
    return data


def copy_inside(root: Path, folder: Path, dest: Path) -> None:
    """`folder` (inside `root`) copied to `dest` as the loader sees it, for a scratch copy: a
    symlink is followed only to a regular file or a folder inside `root`, each folder is copied
    once (a link back to an ancestor, or two links to one folder, cannot loop or repeat; the
    folders reached without a link are copied first), and what no reader takes (a FIFO, a
    device, a file over MAX_VENDORED_FILE) is left out."""
    seen: set[Path] = set()
    plain: list[tuple[Path, Path]] = [(folder, dest)]
    linked: list[tuple[Path, Path]] = []
    inside = root.resolve()
    while plain or linked:
        source, target = (plain or linked).pop()
        real = source.resolve()
        if real in seen or not real.is_relative_to(inside):
            continue
        seen.add(real)
        target.mkdir()
        for entry in sorted(source.iterdir()):
            if escapes(root, entry) is not None:
                continue  # the loader reports it; nothing is read through it
            try:
                info = entry.stat()
            except OSError:
                continue  # dangling
            if stat.S_ISDIR(info.st_mode):
                (linked if entry.is_symlink() else plain).append((entry, target / entry.name))
            elif stat.S_ISREG(info.st_mode) and info.st_size <= MAX_VENDORED_FILE:
                _copy_file(entry, target / entry.name)


def _copy_file(source: Path, target: Path) -> None:
    try:
        data, _size = read_regular(source, MAX_VENDORED_FILE)
    except (OSError, NotRegular):
        return  # changed under us: left out, as a FIFO is
    target.write_bytes(data[:MAX_VENDORED_FILE])


def unlisted(root: Path, folder: Path, listed: set[str]) -> list[tuple[Path, str | None]]:
    """Every entry below `folder` (a file, a symlink, a FIFO…) that is none of the files
    `listed` (paths relative to it) and no empty `.gitkeep`, with why it cannot be read (None
    for a regular file); a symlink is never descended into, nor a folder that leaves `root`."""
    if escapes(root, folder) is not None or not folder.is_dir():
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames.sort()
        links = [d for d in dirnames if (here / d).is_symlink()]
        for name in sorted([*filenames, *links]):
            entry = here / name
            if entry.relative_to(folder).as_posix() not in listed and not kept_empty(entry):
                found.append((entry, check_entry(root, entry)))
    return found
