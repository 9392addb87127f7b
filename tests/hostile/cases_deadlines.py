"""Corpus: every deadline is a deadline, and local files are read bounded (items 11, 12).

A Hub that trickles a byte at a time (every 0.1 s here, against a deadline of 0.5 s: the
issue's 0.5 s against 8 s, scaled down) never trips a read timeout: the process must report the
deadline and exit. A FIFO never ends a read and /dev/zero never runs out: the one
bounded, non-blocking reader refuses both at once. These run the real CLI in a process of its
own, bounded in time (a hang fails the case instead of the suite), where the process's exit
is the point; the others run in this process, their abandoned requests ended with the Hub.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.hostile import hubs
from tests.hostile.build import PATCH_FILE, Case, fifo

LATE = (
    "error: the Hub could not be reached for 2 of 2 artifacts (nothing was checked or written):",
    "  tiny-7b/bf16 (example/Tiny-7B): no answer from the Hub within the 0.5 s deadline; raise it "
    "with --timeout or PROFILEGEN_NETWORK_TIMEOUT",
)
CACHE_FILE = "error: PROFILEGEN_CACHE={root}/cache is a file, not a folder (point it at a folder, or unset it)"


def cache_file(root: Path) -> None:
    (root / "cache").write_text("not a folder\n")


def sparse(name: str, size: int) -> object:
    """A file of `size` bytes (sparse: no disk) beside the registry root."""

    def apply(root: Path) -> None:
        with (root.parent / name).open("wb") as handle:
            handle.truncate(size)

    return apply


def checkpoint_with_a_fifo(root: Path) -> None:
    folder = root.parent / "ckpt"
    folder.mkdir()
    os.mkfifo(folder / "config.json")


def deadline_cases() -> list[Case]:
    add = ("cache", "add")
    return [
        Case(
            "lock-against-a-trickling-hub",
            hub=hubs.trickling,
            args=("lock", "--timeout", "0.5"),
            code=2,
            says=LATE,
            bounded=True,
        ),
        Case(
            "check-online-against-a-trickling-hub",
            hub=hubs.trickling,
            args=("check", "--online", "--timeout", "0.5"),
            code=2,
            says=LATE,
        ),
        Case(
            "fetch-against-a-trickling-hub",
            hub=hubs.trickling,
            args=("fetch", "tiny-chat", "--model-dir", "{out}", "--timeout", "0.5"),
            code=2,
            says=(
                "error: checking tiny-7b/bf16 on the Hub did not finish within 0.5 s (raise it "
                "with --timeout or PROFILEGEN_NETWORK_TIMEOUT)",
            ),
        ),
        Case(
            "model-add-against-a-trickling-hub",
            hub=hubs.trickling,
            args=("model", "add", "example/Tiny-7B", "--timeout", "0.5", "--dry-run"),
            code=2,
            says=(
                "error: reading example/Tiny-7B on the Hub did not finish within 0.5 s (raise it "
                "with --timeout or PROFILEGEN_NETWORK_TIMEOUT); without the Hub, add it from a "
                "local copy: profilegen model add example/Tiny-7B --from-dir DIR --revision SHA",
            ),
        ),
        Case(
            "cache-add-a-fifo",
            setup=(fifo("pipe"),),
            args=(*add, "{root}/pipe"),
            says=("error: {root}/pipe: is a FIFO, not a regular file",),
            bounded=True,
        ),
        Case(
            "cache-add-dev-zero",
            args=(*add, "/dev/zero"),
            says=("error: /dev/zero: is a character device, not a regular file",),
            bounded=True,
        ),
        Case(
            "cache-add-a-file-larger-than-any-pin",
            setup=(sparse("big.bin", 10 * 2**30),),
            args=(*add, "{root}/../big.bin"),
            says=(
                "error: {root}/../big.bin: 10,737,418,240 bytes, more than any patch file the "
                "registry pins (62 bytes at most)",
            ),
        ),
        Case(
            "cache-add-a-pinned-file-and-a-fifo",
            setup=(fifo("pipe"),),
            args=(*add, "{root}/" + PATCH_FILE, "{root}/pipe"),
            says=(
                "cached {root}/" + PATCH_FILE + " as tiny-fix/fix.patch",
                "error: 1 of 2 file(s) not added to the cache:",
                "  {root}/pipe: is a FIFO, not a regular file",
            ),
            bounded=True,
        ),
        Case(
            "cache-is-a-file",
            setup=(cache_file,),
            env={"PROFILEGEN_CACHE": "{root}/cache"},
            args=("render", "tiny-chat", "-o", "{out}"),
            code=2,
            says=(CACHE_FILE,),
            bounded=True,
        ),
        Case(
            "cache-is-inside-a-file",
            setup=(cache_file,),
            env={"PROFILEGEN_CACHE": "{root}/cache/profilegen"},
            args=("check",),
            code=2,
            says=(
                "error: PROFILEGEN_CACHE={root}/cache/profilegen is inside {root}/cache, which "
                "is a file, not a folder (point it at a folder, or unset it)",
            ),
        ),
        Case(
            "model-add-from-a-folder-whose-config-is-a-fifo",
            setup=(checkpoint_with_a_fifo,),
            args=(
                "model",
                "add",
                "lab/Tiny-7B",
                "--from-dir",
                "{root}/../ckpt",
                "--revision",
                "0123456789abcdef0123456789abcdef01234567",
                "--dry-run",
            ),
            says=("has no config.json (and no GGUF file)",),
            code=2,
        ),
    ]
