"""Symlinks where profilegen writes: each one is a finding of its own, and none is followed.

A committed symlink would carry `render --all`'s writes and deletes wherever it points (out of
the repository, or into registry/ or another generated folder), and `check` would read and
list what lies there. compose/, gateways/, k8s/, docs/benchmarks/ and schema/ hold only what
profilegen writes, so any symlink in them (or one of them as a link) is refused; so is one on
the way to a generated docs/ page or the lock. `render --all` writes nothing while one is
there; `check` reports each (`disk-link`) and reads nothing through it.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from pathlib import Path

from ..docs.catalog import BENCHMARKS_DIR
from ..errors import Finding, Location
from ..lockfile.lock import LOCK_NAME
from ..write import NO_LINKS, link_on, link_reason
from .tree import COMPOSE_DIR, GATEWAYS_DIR, K8S_DIR

RULE = "disk-link"
HINT = "delete the link: profilegen writes a folder or file of its own in its place"
# Folders that hold only generated output, walked whole.
GENERATED_FOLDERS = (COMPOSE_DIR, GATEWAYS_DIR, K8S_DIR, BENCHMARKS_DIR)
# What `check` looks at: the folders above and schema/, and the lock.
CHECKED_FOLDERS = (*GENERATED_FOLDERS, "schema")
CHECKED_FILES = (LOCK_NAME,)


def _walk(root: Path, folder: str) -> list[str]:
    """Every symlink in `folder` (itself included, and each folder on its way), as paths
    relative to `root`; never descends into one."""
    top = link_on(root, root / folder)
    if top is not None:
        return [os.path.relpath(top, root)]
    found: list[str] = []
    pending = [root / folder]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:  # not there, or not a folder: nothing below it
            continue
        for entry in entries:
            if entry.is_symlink():
                found.append(os.path.relpath(entry.path, root))
            elif entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    return found


def links(root: Path, folders: Iterable[str], paths: Iterable[str] = ()) -> dict[str, str]:
    """Every symlink below `root` in `folders` or on the way to one of `paths` (relative to
    `root`), by its relative path, with the sentence that reports it."""
    folders = list(folders)
    found = {rel for folder in folders for rel in _walk(root, folder)}
    walked = tuple(f"{folder}/" for folder in folders)
    clear: set[str] = set()
    for rel in paths:
        if rel.startswith(walked):
            continue  # any link on its way is one the walk found
        link = link_on(root, root / rel, clear)
        if link is not None:
            found.add(os.path.relpath(link, root))
    rels = sorted(Path(rel).as_posix() for rel in found)
    return {rel: f"{rel} {link_reason(root, root / rel)}: {NO_LINKS}" for rel in rels}


def link_findings(found: dict[str, str]) -> list[Finding]:
    """The findings `render --all` refuses with: the same as `check`'s."""
    return [Finding(Location(rel), message, HINT, RULE) for rel, message in found.items()]


def through(rel: str, found: Container[str]) -> bool:
    """True when `rel` is one of the links `found`, or lies below one."""
    return any(p.as_posix() in found for p in (Path(rel), *Path(rel).parents))


def through_link(root: Path, rel: str) -> bool:
    """True when `rel` (relative to `root`) is or passes through a symlink below `root`."""
    return link_on(root, root / rel) is not None
