"""The key that signs this user's cache entries, kept outside every cache folder.

A cache folder may come from elsewhere: restored by CI from a pull request's run, copied from
another machine, shared. Nothing in it is trusted for what it says. Each entry carries an
HMAC-SHA256 under a random key of this user's, made on first use in a private folder of its
own ($XDG_STATE_HOME/profilegen, else ~/.local/state/profilegen; PROFILEGEN_STATE picks
another): an entry whose MAC does not check is a miss. A key file that is not a regular file
of this user's that only they may read, or one inside the cache folder (where it would travel
with the entries it signs), means no key: nothing is read from the cache nor written to it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ..resources import cache_root

KEY_FILE = "cache-key"
_SIZE = 32
_TEXT = 2 * _SIZE + 1  # hex digits and a newline
# The key (or None) by the key file and the cache folder it was checked against.
_KNOWN: dict[tuple[str, str], bytes | None] = {}


def state_folder() -> Path:
    """The folder of this user's profilegen state (the cache key)."""
    if setting := os.environ.get("PROFILEGEN_STATE"):
        return Path(setting).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or "~/.local/state"
    return Path(base).expanduser() / "profilegen"


def secret() -> bytes | None:
    """This user's cache key, made on first use; None when there is none to be trusted."""
    path, cache = state_folder() / KEY_FILE, cache_root()
    memo = (os.fspath(path), os.fspath(cache))
    if memo not in _KNOWN:
        _KNOWN[memo] = None if _inside(path, cache) else _load(path)
    return _KNOWN[memo]


def _inside(path: Path, cache: Path) -> bool:
    try:
        return path.resolve().is_relative_to(cache.resolve())
    except (OSError, RuntimeError):
        return True


def _load(path: Path) -> bytes | None:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return None
    try:
        _make(path)
        return _read(path)
    except (OSError, ValueError):
        return None


def _read(path: Path) -> bytes:
    """The key in `path`: a regular file of this user's, private to them. Raises OSError or
    ValueError."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        getuid = getattr(os, "getuid", None)
        if not stat.S_ISREG(info.st_mode) or info.st_size != _TEXT:
            raise ValueError(f"{path} is not a key file")
        if (getuid is not None and info.st_uid != getuid()) or info.st_mode & 0o077:
            raise ValueError(f"{path} is not private to this user")
        text = os.read(fd, _TEXT + 1)
    finally:
        os.close(fd)
    key = bytes.fromhex(text.decode("ascii").strip())
    if len(key) != _SIZE:
        raise ValueError(f"{path} is not a key file")
    return key


def _make(path: Path) -> None:
    """A new random key, complete before it has its name (processes starting at once agree
    on the first one linked)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staged = path.with_name(f".{KEY_FILE}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(_SIZE).hex().encode() + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs
            os.link(staged, path)
    finally:
        staged.unlink(missing_ok=True)
