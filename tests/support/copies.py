"""Copies of test trees made by `cp`: a scratch repository is hundreds of files, and
`shutil.copytree` takes two to four times as long over them (it copies every file's status in
Python). Where the system has no `cp`, shutil makes the same copy."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

_CP = shutil.which("cp")


def copy_tree(src: Path, dest: Path, *, link: bool = False, symlinks: bool = False) -> Path:
    """`dest` (which must not exist) made a copy of `src`, modes and times kept, as
    `shutil.copytree(src, dest, symlinks=...)` makes it; with `link`, every file is a hard
    link to its source (so a test must unlink such a file before it changes it)."""
    if _CP is None or dest.exists():
        copy = os.link if link else shutil.copy2
        shutil.copytree(src, dest, symlinks=symlinks, copy_function=copy)
        return dest
    argv = [_CP, "-a", *([] if symlinks else ["-L"]), *(["-l"] if link else []), "--"]
    subprocess.run([*argv, str(src), str(dest)], check=True, stdin=subprocess.DEVNULL)
    return dest
