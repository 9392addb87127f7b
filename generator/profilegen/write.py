"""The only module that writes project files: staged beside their targets, then renamed into
place all at once, with the mode the umask gives.

Everything is written to temporary files (or a temporary folder) first; only when all of it is
complete is it renamed into place, with SIGINT and SIGTERM held off for those few renames. An
error or an interrupt before then leaves every target as it was, and one after leaves every
target new: never a mix.

A repository's files come from pull requests, and a committed symlink would carry a write or a
delete wherever it points: nothing is written or removed at or through a symlink below the
repository's root (`root=`), not even one that stays inside it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import FrameType

# Left by a run that was killed (SIGKILL, power loss) between staging and cleaning up.
STAGE_PREFIX = ".profilegen-stage-"
ASIDE_PREFIX = ".profilegen-old-"
_HELD = (signal.SIGINT, signal.SIGTERM)
NO_LINKS = "profilegen writes and removes nothing through a symlink"


class LinkRefused(OSError):
    """A path to write or remove that is, or passes through, a symlink below the repository's
    root; `filename` is the link, relative to the root."""


def link_on(root: Path, path: Path, clear: set[str] | None = None) -> Path | None:
    """The outermost entry below `root` on the way to `path` (itself included) that is a
    symlink, else None; a part that does not exist yet has nothing below it. `path` is taken
    as written: under `root`, with no `..` (else ValueError). `clear`: entries already found
    to be no symlink, kept up to date (many paths share their folders)."""
    top = root.parts
    below = path.parts[len(top) :]
    if path.parts[: len(top)] != top or ".." in below:
        raise ValueError(f"{path} is not a path inside {root}")
    current = os.fspath(root)
    for part in below:
        current = f"{current}{os.sep}{part}"
        if clear is not None and current in clear:
            continue
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return Path(current)
        if clear is not None:
            clear.add(current)
    return None


def link_reason(root: Path, link: Path) -> str:
    """What the symlink `link` is, as the end of a sentence that starts with its name."""
    try:
        target = str(link.readlink())
        inside = link.resolve().is_relative_to(root.resolve())
    except OSError:
        return "is a symlink"
    except RuntimeError:  # Python 3.11 raises RuntimeError for a loop
        return f"is a symlink to {target} (a loop)"
    return f"is a symlink to {target}, {'inside' if inside else 'outside'} the repository"


def refuse_links(root: Path, paths: Iterable[Path]) -> None:
    """Raises LinkRefused for the first path (in order) that is or passes through a symlink
    below `root`."""
    clear: set[str] = set()
    for path in sorted(paths, key=os.fspath):
        link = link_on(root, path, clear)
        if link is not None:
            rel = os.path.relpath(link, root)
            raise LinkRefused(errno.ELOOP, f"{link_reason(root, link)}: {NO_LINKS}", rel)


def umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(*, executable: bool = False) -> int:
    """What `open()` or `mkdir` would give a new file (or folder, or script): 0o666 (0o777)
    less the umask."""
    return (0o777 if executable else 0o666) & ~umask()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done, then take effect (main thread only:
    Python runs signal handlers there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        pending.append(signum)

    previous = {s: signal.signal(s, hold) for s in _HELD}
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)


def _write_new(path: Path, content: bytes, mode: int, *, durable: bool) -> None:
    """A file that does not exist yet (exclusive create), complete and synced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fchmod(handle.fileno(), mode)
        if durable:
            os.fsync(handle.fileno())


def _staged(path: Path, content: bytes, mode: int | None, *, durable: bool) -> Path:
    """A temporary file beside `path` holding `content` (removed again on failure)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # named after the file it was for, not its temporary name
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fchmod(handle.fileno(), file_mode() if mode is None else mode)
            if durable:
                os.fsync(handle.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _make_parents(folder: Path, made: list[Path]) -> None:
    """Creates `folder` and its missing parents, recording each one created (outermost first)."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.exists() or candidate.is_symlink():
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        candidate.mkdir()
        made.append(candidate)


def _remove_made(made: list[Path]) -> None:
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()


def write_atomic(
    path: Path,
    content: bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    root: Path | None = None,
) -> None:
    """Temp file in the same folder, fsync, rename: readers never see half a file.

    `mode` defaults to what the umask gives a new file. `durable=False` skips the fsync, for
    files that may be lost in a crash but must never be torn (cache entries: a reader checks
    them and recomputes). `root`: the repository `path` belongs to (LinkRefused when it is or
    passes through a symlink below it); None for a file of the user's own (a cache)."""
    if root is not None:
        refuse_links(root, [path])
    made: list[Path] = []
    try:
        _make_parents(path.parent, made)
        tmp = _staged(path, content, mode, durable=durable)
    except BaseException:
        _remove_made(made)
        raise
    try:
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        _remove_made(made)
        raise


def write_files(
    files: Mapping[Path, bytes],
    remove: Iterable[Path] = (),
    prune: Iterable[Path] = (),
    *,
    root: Path,
) -> list[Path]:
    """Writes every file whose content differs and removes the files `remove`, all at once;
    then removes each folder of `prune` left empty. Returns the files written, sorted.

    Every path is in the repository at `root`: when any is or passes through a symlink below
    it, LinkRefused, before a byte is read or written."""
    remove, prune = list(remove), list(prune)
    refuse_links(root, [*files, *remove, *prune])
    changed = [p for p in sorted(files) if not (p.is_file() and p.read_bytes() == files[p])]
    made: list[Path] = []
    staged: dict[Path, Path] = {}
    try:
        for path in changed:
            _make_parents(path.parent, made)
            staged[path] = _staged(path, files[path], None, durable=True)
        with signals_held():
            for path, tmp in staged.items():
                tmp.replace(path)
            staged.clear()
            for path in remove:
                path.unlink(missing_ok=True)
    except BaseException:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        _remove_made(made)
        raise
    for folder in prune:
        with contextlib.suppress(OSError):
            folder.rmdir()
    return changed


def write_folder(
    out: Path,
    files: Mapping[str, bytes],
    *,
    stale: Iterable[str] = (),
    executable: Callable[[str], bool] = lambda _name: False,
) -> None:
    """Writes `files` (paths relative to `out`) as one unit.

    They are staged in a temporary folder: beside `out` when it does not exist, then renamed
    into place; inside it when it does, then each top-level entry they make (and each name in
    `stale`, an entry of an older write) is moved aside and the new ones renamed in. Entries
    of `out` named by neither are left alone."""
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise NotADirectoryError(20, "exists and is not a folder", str(out))
        _replace_entries(out, files, stale, executable)
        return
    made: list[Path] = []
    stage: Path | None = None
    try:
        _make_parents(out.parent, made)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out.parent))
        _fill(stage, files, executable)
        stage.chmod(file_mode(executable=True))
        with signals_held():
            stage.rename(out)
            stage = None
    except BaseException:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        _remove_made(made)
        raise


def _fill(folder: Path, files: Mapping[str, bytes], executable: Callable[[str], bool]) -> None:
    for name, content in sorted(files.items()):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_new(path, content, file_mode(executable=executable(name)), durable=True)


def _replace_entries(
    out: Path, files: Mapping[str, bytes], stale: Iterable[str], executable: Callable[[str], bool]
) -> None:
    for leftover in out.glob(f"{STAGE_PREFIX}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    for leftover in out.glob(f"{ASIDE_PREFIX}*"):
        shutil.rmtree(leftover, ignore_errors=True)
    tops = sorted({name.split("/", 1)[0] for name in files})
    replaced = [*tops, *(n for n in dict.fromkeys(stale) if n not in tops)]
    stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out))
    aside = Path(tempfile.mkdtemp(prefix=ASIDE_PREFIX, dir=out))
    moved: list[str] = []
    placed: list[str] = []
    try:
        _fill(stage, files, executable)
        with signals_held():
            try:
                for name in replaced:
                    if (out / name).exists() or (out / name).is_symlink():
                        (out / name).rename(aside / name)
                        moved.append(name)
                for name in tops:
                    (stage / name).rename(out / name)
                    placed.append(name)
            except BaseException:
                _undo(out, stage, aside, moved, placed)
                raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(aside, ignore_errors=True)


def _undo(out: Path, stage: Path, aside: Path, moved: list[str], placed: list[str]) -> None:
    """Puts back what a failed replacement had moved (best effort: the disk said no)."""
    for name in placed:
        with contextlib.suppress(OSError):
            (out / name).rename(stage / name)
    for name in moved:
        with contextlib.suppress(OSError):
            (aside / name).rename(out / name)
