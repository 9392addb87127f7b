"""The result cache the test session runs with (PROFILEGEN_CACHE for every test process).

profilegen's caches are content-addressed: a result is found again only for the same inputs
and the same code that made it. So the suite keeps one cache from run to run, as a user's
machine does, and a run after a run does again only what changed since: sandbox runs of
unchanged bundles, renders and schemas are read back instead of made. It lives apart from
the user's own cache, and is trimmed (oldest entries first) once it outgrows its room.

PROFILEGEN_TEST_CACHE picks it: unset, `~/.cache/profilegen/tests` (under XDG_CACHE_HOME
where that is set); a folder; or `cold` for a private, empty cache removed with the session
(CI, which starts from nothing, runs that way).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

SETTING = "PROFILEGEN_TEST_CACHE"
COLD = "cold"
# Past this the oldest results go until the cache is half of it (a run of the whole suite
# after a change to profilegen's code writes about 70 MiB of new results).
ROOM = 768 << 20


def session_cache() -> tuple[Path, bool]:
    """The folder the session's processes share, and whether it is the session's own (to be
    removed at its end): a kept folder that cannot be made means a cold run, not an error."""
    setting = os.environ.get(SETTING, "")
    if setting != COLD:
        base = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
        folder = Path(setting).expanduser() if setting else base / "profilegen" / "tests"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError:
            pass
        else:
            trim(folder / "results", ROOM)
            return folder, False
    return Path(tempfile.mkdtemp(prefix="profilegen-test-cache-")), True


def trim(results: Path, room: int) -> None:
    """Removes the oldest results (results/KIND/KEY) while they take more than `room` bytes,
    down to half."""
    entries: list[tuple[float, int, Path]] = []
    for entry in results.glob("*/*"):
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            entries.append((info.st_mtime, info.st_size, entry))
    total = sum(size for _, size, _ in entries)
    if total <= room:
        return
    for _, size, entry in sorted(entries):
        if total <= room // 2:
            break
        entry.unlink(missing_ok=True)
        total -= size
