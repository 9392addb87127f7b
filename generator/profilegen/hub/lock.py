"""The lock file: what every Hub artifact and remote patch file resolved to, and reading it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ProfilegenError
from ..registry import Registry
from .artifacts import ArtifactUse

if TYPE_CHECKING:
    from .types import ArtifactResult

LOCK_NAME = "profilegen.lock.json"
LOCK_VERSION = 1


@dataclass
class Lock:
    """What `profilegen lock` recorded: resolved artifacts and pinned remote patch files."""

    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)

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
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LockError(
            f"{LOCK_NAME}: cannot be read as JSON ({exc}); rerun `profilegen lock`"
        ) from exc
    if not isinstance(data, dict) or data.get("lock_version") != LOCK_VERSION:
        raise LockError(f"{LOCK_NAME}: unknown lock_version; rerun `profilegen lock`")
    return Lock(dict(data.get("artifacts") or {}), dict(data.get("patches") or {}))


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
    a = use.artifact
    if entry.get("repo") != a.repo or entry.get("revision") != a.revision:
        return False
    locked = {f.get("path") for f in entry.get("files") or []}
    return all(p in locked for p in a.files)
