"""What `fetch` downloaded of files the lock has no sha256 for, and holding later files to it.

An artifact the lock has not resolved (or a small file the Hub keeps no sha256 for) has nothing
to be checked against but its size. So `fetch` records, in MODEL_DIR/.profilegen-fetched.json,
the sha256 of every such file it downloaded, with the commit it came from; `fetch` and `verify`
then hold the files to it: a file with other bytes later (the branch moved, the file was
replaced) is a failure that names it, never silently taken for the first.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from ..lockfile.paths import inside, name_problem
from ..registry.safejson import load_json_file
from ..write import write_atomic
from .verify import Record

FETCHED_NAME = ".profilegen-fetched.json"
FETCHED_VERSION = 1
MAX_FETCHED = 16 * 2**20  # a record of millions of files is no record fetch wrote


class Fetched:
    """The fetched-files record of one MODEL_DIR: artifact key -> repo, commit, files."""

    def __init__(self, model_dir: Path) -> None:
        self.path = model_dir / FETCHED_NAME
        self.artifacts: dict[str, dict[str, Any]] = {}
        self.changed = False
        # Read as the verified-files record is: bounded, a regular file only (a FIFO there is
        # never waited on, a 2,000-deep document is not a RecursionError).
        with contextlib.suppress(OSError, ValueError):
            data = load_json_file(self.path, MAX_FETCHED)
            if isinstance(data, dict) and data.get("version") == FETCHED_VERSION:
                table = data.get("artifacts")
                self.artifacts = table if isinstance(table, dict) else {}

    def held(self, key: str) -> tuple[str | None, dict[str, str]]:
        """The commit and the sha256 of each file recorded for artifact `key`."""
        entry = self.artifacts.get(key)
        if not isinstance(entry, dict):
            return None, {}
        files = entry.get("files")
        commit = entry.get("commit")
        held = {
            path: sha
            for path, sha in (files.items() if isinstance(files, dict) else ())
            if name_problem(path) is None and isinstance(sha, str)
        }
        return (commit if isinstance(commit, str) else None), held

    def hold(self, key: str, repo: str, commit: str | None, files: dict[str, str]) -> None:
        """Records the sha256 of files just downloaded (those already held stay as they were)."""
        old_commit, held = self.held(key)
        added = {p: s for p, s in files.items() if p not in held}
        if not added:
            return
        self.artifacts[key] = {
            "repo": repo,
            "commit": old_commit or commit,
            "files": dict(sorted({**held, **added}.items())),
        }
        self.changed = True

    def save(self) -> None:
        """Best effort, as the verified-files record: a read-only MODEL_DIR records nothing."""
        if not self.changed:
            return
        data = {"version": FETCHED_VERSION, "artifacts": dict(sorted(self.artifacts.items()))}
        with contextlib.suppress(OSError):
            write_atomic(self.path, (json.dumps(data, indent=1) + "\n").encode())
        self.changed = False


def held_problems(
    key: str, target: Path, paths: list[str], fetched: Fetched, record: Record
) -> list[str]:
    """Each file among `paths` that is there with other bytes than `fetch` recorded for it."""
    commit, held = fetched.held(key)
    problems = []
    for name in paths or sorted(held):  # a whole repository: every file recorded
        want = held.get(name)
        path = inside(target, name)
        if want is None or path is None or not path.is_file():
            continue
        got = record.sha256(path)
        if got != want:
            at = f" at commit {commit[:12]}" if commit else ""
            pin = f"pin the artifact's revision to {commit} to get those, or " if commit else ""
            problems.append(
                f"{path}: sha256 {got[:16]}… is not what `profilegen fetch` downloaded{at} "
                f"({want[:16]}…, recorded in {fetched.path}): the file changed since (its branch "
                f"moved, or it was replaced); {pin}delete that record to take the new bytes"
            )
    return problems


def hold_downloaded(
    key: str,
    repo: str,
    commit: str | None,
    target: Path,
    paths: list[str],
    fetched: Fetched,
    record: Record,
) -> list[str]:
    """Files just fetched held to what was recorded before; when they are, the sha256 of those
    not yet recorded is (problems name each file with other bytes)."""
    problems = held_problems(key, target, paths, fetched, record)
    if problems:
        return problems
    files = {}
    for name in paths:
        path = inside(target, name)
        if path is not None and path.is_file():
            files[name] = record.sha256(path)
    fetched.hold(key, repo, commit, files)
    return []
