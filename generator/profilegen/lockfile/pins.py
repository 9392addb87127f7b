"""Whether an artifact's files are pinned to one commit, and how that is said wherever a user
decides on them (`list`, `show`, `artifacts`, `fetch`, `verify`).

An artifact is pinned when the registry names a commit as its revision, or when the lock holds
a current entry resolved on the Hub (`profilegen lock` online): `fetch` then downloads that
commit and checks each file's sha256. Otherwise it is UNPINNED: its revision is a branch (`main`
when none is given) and `fetch` downloads whatever the branch holds that day.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.model import Artifact
from .lock import COMMIT, LOCK_NAME, Lock, LockError, artifact_matches, read_lock

UNPINNED = "UNPINNED"


@dataclass(frozen=True)
class Pin:
    """The commit an artifact's files are pinned to, and by what (None: unpinned)."""

    commit: str | None
    by: str | None  # "registry" (its revision) or "lock" (resolved on the Hub)

    @property
    def pinned(self) -> bool:
        return self.commit is not None


def pin_of(artifact: Artifact, entry: dict[str, Any] | None) -> Pin:
    """How `artifact` is pinned, given its lock entry (None when the lock has none)."""
    if artifact.pinned:
        return Pin(artifact.revision, "registry")
    if entry is not None and entry.get("resolved") and artifact_matches(artifact, entry):
        commit = entry.get("commit")
        if isinstance(commit, str) and COMMIT.fullmatch(commit):
            return Pin(commit, "lock")
    return Pin(None, None)


def pin_label(artifact: Artifact, pin: Pin) -> str:
    """One phrase: the commit and what pins it, or UNPINNED and what that means."""
    branch = artifact.revision or "main"
    if pin.commit is not None and pin.by == "registry":
        return f"pinned to commit {pin.commit[:12]} (the registry's revision)"
    if pin.commit is not None:
        return f"pinned to commit {pin.commit[:12]} ({LOCK_NAME} resolved {branch})"
    return (
        f"{UNPINNED}: revision {branch} is a branch, so fetch downloads whatever it holds that day "
        "(pin a commit as its revision, or run `profilegen lock` online)"
    )


def lock_pin(artifact: Artifact, key: str, lock: Lock | None) -> Pin:
    return pin_of(artifact, lock.artifacts.get(key) if lock is not None else None)


def lock_or_none(root: Path) -> Lock | None:
    """The lock, or None when there is none or it cannot be read: then only the registry's own
    commits pin anything (`check` reports the lock)."""
    try:
        return read_lock(root)
    except LockError:
        return None
