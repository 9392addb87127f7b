"""The lock file: what every Hub artifact and remote patch file resolved to, and reading it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ProfilegenError
from ..model.model import Artifact
from ..registry import Registry
from ..registry.safejson import load_json
from .artifacts import SIZE_TOLERANCE, ArtifactUse
from .paths import name_problem, shown

if TYPE_CHECKING:
    from .records import ArtifactResult

LOCK_NAME = "profilegen.lock.json"
LOCK_VERSION = 1
COMMIT = re.compile(r"[0-9a-f]{40}")
SHA256 = re.compile(r"[0-9a-f]{64}")
# A file of a repository, as the registry may name one: relative, never climbing out.


@dataclass
class Lock:
    """What `profilegen lock` recorded: resolved artifacts and pinned remote patch files."""

    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The text it was read from, to locate an entry's lines (empty for a lock being built).
    text: str = field(default="", repr=False, compare=False)

    def to_bytes(self) -> bytes:
        data = {
            "lock_version": LOCK_VERSION,
            "artifacts": {k: self.artifacts[k] for k in sorted(self.artifacts)},
            "patches": {k: self.patches[k] for k in sorted(self.patches)},
        }
        return (json.dumps(data, indent=2, sort_keys=False) + "\n").encode()


class LockError(ProfilegenError):
    pass


def read_lock(root: Path) -> Lock | None:
    path = root / LOCK_NAME
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        data = load_json(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LockError(
            f"{LOCK_NAME}: cannot be read as JSON ({exc}); rerun `profilegen lock`"
        ) from exc
    if not isinstance(data, dict) or data.get("lock_version") != LOCK_VERSION:
        raise LockError(f"{LOCK_NAME}: unknown lock_version; rerun `profilegen lock`")
    tables = [data.get("artifacts") or {}, data.get("patches") or {}]
    for name, table in zip(("artifacts", "patches"), tables, strict=True):
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise LockError(
                f"{LOCK_NAME}: {name} must map keys to entries; rerun `profilegen lock`"
            )
    return Lock(dict(tables[0]), dict(tables[1]), text)


def declared_entry(use: ArtifactUse) -> dict[str, Any]:
    """A lock entry from registry facts alone, for when the Hub cannot be asked."""
    a = use.artifact
    return {
        "repo": a.repo,
        "revision": a.revision,
        "resolved": False,
        "commit": a.revision if a.pinned else None,
        "files": [{"path": p, "size": None, "sha256": None} for p in a.files],
        "total_size": None,
        "declared_size_bytes": a.size_bytes,
        "gated": a.gated,
    }


def resolved_entry(use: ArtifactUse, result: ArtifactResult) -> dict[str, Any]:
    a = use.artifact
    return {
        "repo": a.repo,
        "revision": a.revision,
        "resolved": True,
        "commit": result.commit,
        "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in result.files],
        "total_size": result.total_size,
        "declared_size_bytes": a.size_bytes,
        "gated": result.gated,
    }


def patch_entries(registry: Registry) -> dict[str, dict[str, Any]]:
    out = {}
    for patch in registry.patches.values():
        if patch.source.kind != "remote":
            continue
        for f in patch.source.files:
            out[f"{patch.id}/{f.path}"] = {
                "url": patch.source.url(f),
                "size": f.size,
                "sha256": f.sha256,
            }
    return out


def entry_matches(use: ArtifactUse, entry: dict[str, Any]) -> bool:
    """Whether a lock entry still describes the registry's artifact."""
    return artifact_matches(use.artifact, entry)


def artifact_matches(a: Artifact, entry: dict[str, Any]) -> bool:
    """Whether a lock entry still describes the artifact `a`."""
    if entry.get("repo") != a.repo or entry.get("revision") != a.revision:
        return False
    if entry.get("declared_size_bytes") != a.size_bytes:
        return False
    files = entry.get("files")
    if not isinstance(files, list):
        return False
    locked = {f.get("path") for f in files if isinstance(f, dict)}
    return all(p in locked for p in a.files)


def bad_names(entry: dict[str, Any]) -> list[tuple[object, str, int]]:
    """(name, why, n) of each file an entry records that would leave the model folder or
    repeats (n: how many records of that name come before it): such an entry is never used
    to open a file."""
    files = entry.get("files")
    names = [f.get("path") for f in files if isinstance(f, dict)] if isinstance(files, list) else []
    out = []
    seen: list[object] = []
    for name in names:
        problem = name_problem(name)
        if problem is None and name in seen:
            problem = "is listed twice"
        if problem is not None:
            out.append((name, problem, seen.count(name)))
        seen.append(name)
    return out


def line_of(text: str, key: str, path: object = None, skip: int = 0) -> int | None:
    """The line of entry `key` in the lock's text as `lock` writes it (of its file record
    for `path` when given, the one after `skip` others of that path); else the entry's."""
    lines = text.splitlines()
    head = f"{json.dumps(key)}: {{"
    start = next((i for i, line in enumerate(lines) if line.strip() == head), None)
    if start is None:
        return None
    if path is None:
        return start + 1
    wanted = f'"path": {json.dumps(path)}'
    found = [i for i in range(start, len(lines)) if wanted in lines[i]]
    return (found[skip] if len(found) > skip else start) + 1


def _file_problem(f: Any) -> str | None:
    if not isinstance(f, dict) or not isinstance(f.get("path"), str):
        return "a file without a path"
    if (problem := name_problem(f["path"])) is not None:
        return f"file name {shown(f['path'])}, which {problem}"
    size, sha = f.get("size"), f.get("sha256")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return f"{f['path']} without a size"
    if sha is not None and not (isinstance(sha, str) and SHA256.fullmatch(sha)):
        return f"{f['path']} with a malformed sha256"
    return None


def resolved_problems(use: ArtifactUse, entry: dict[str, Any]) -> list[str]:
    """What makes a resolved entry unable to vouch for the files it names (empty: sound)."""
    return artifact_problems(use.artifact, entry)


def artifact_problems(artifact: Artifact, entry: dict[str, Any]) -> list[str]:
    """What makes a resolved entry unable to vouch for the files of `artifact` (empty: sound)."""
    commit = entry.get("commit")
    if not (isinstance(commit, str) and COMMIT.fullmatch(commit)):
        return ["records no commit"]
    files = entry.get("files") or []
    if not files:
        return ["records no files"]
    bad = [p for p in map(_file_problem, files) if p]
    if bad:
        return [f"records {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")]
    total = sum(f["size"] for f in files)
    if entry.get("total_size") != total:
        return [f"records total_size {entry.get('total_size')}, its files add up to {total:,}"]
    declared = artifact.size.bytes if artifact.size is not None else None
    if declared is not None and abs(total - declared) > SIZE_TOLERANCE * declared:
        return [
            f"records {total:,} bytes of files, the registry declares {declared:,} "
            f"(±{SIZE_TOLERANCE:.0%})"
        ]
    return []
