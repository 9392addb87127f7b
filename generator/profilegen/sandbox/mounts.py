"""Bind mounts as a script applies them: an fstab for one `mount --all`, with the mount
points it needs made beforehand, or, where a mount lands inside an earlier one (whose mount
point can only be made once that one is in place), the list to apply one by one.

The box's set-up (`box.py`) and each explain job inside a box (`explain/sandbox.py`) lay out
their binds this way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from .paths import inside


@dataclass(frozen=True)
class BindMount:
    source: str  # the path the mounting script sees
    target: str  # the container path
    read_only: bool
    folder: bool  # the source is a folder (else a file)


@dataclass(frozen=True)
class MountPlan:
    """Either `fstab` with `dirs` and `files` (the mount points to make, under the prefix the
    plan was made for), or, with nested mounts, `ordered`: source, target and 1 (read-only)
    or 0 for each mount, in order."""

    fstab: str = ""
    dirs: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    ordered: tuple[str, ...] = ()


def plan_mounts(mounts: Sequence[BindMount], under: str = "") -> MountPlan:
    """The plan for `mounts`, in order; `under` is where the container's root is for the
    script that mounts (the set-up's `root`; "" inside the box)."""
    targets = [m.target for m in mounts]
    if any(inside(t, earlier) for i, t in enumerate(targets) for earlier in targets[:i]):
        words = [w for m in mounts for w in (m.source, m.target, "01"[m.read_only])]
        return MountPlan(ordered=tuple(words))
    dirs: set[str] = set()
    files: list[str] = []
    lines = []
    for mount in mounts:
        if mount.folder:
            dirs.add(under + mount.target)
        else:
            dirs.add(under + (mount.target.rsplit("/", 1)[0] or "/"))
            files.append(under + mount.target)
        options = "bind,ro" if mount.read_only else "bind"
        target = fstab_field(under + mount.target)
        lines.append(f"{fstab_field(mount.source)} {target} none {options} 0 0\n")
    return MountPlan("".join(lines), tuple(sorted(dirs)), tuple(files))


def fstab_field(path: str) -> str:
    """A path as an fstab field: blanks, backslashes and # written as octal escapes."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\#" else c for c in path)


def nul(items: Sequence[str]) -> bytes:
    """Items as the scripts read them (`mapfile -d ''`): each ended by a NUL byte."""
    return b"".join(os.fsencode(item) + b"\0" for item in items)
