"""Every Hub artifact the registry uses, and the lock file that pins what they resolve to."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Location, ProfilegenError
from .models import Profile
from .models.model import Artifact
from .registry import Registry

if TYPE_CHECKING:
    # huggingface_hub costs ~0.4 s to import: only the online paths load it.
    from .hub import ArtifactRequest, ArtifactResult

LOCK_NAME = "profilegen.lock.json"
LOCK_VERSION = 1
# Declared sizes are rounded ("15.9 GB"): 5% absorbs that rounding, while a GB/GiB
# mix-up (7.4%) still shows.
SIZE_TOLERANCE = 0.05


@dataclass(frozen=True)
class ArtifactUse:
    key: str
    artifact: Artifact
    location: Location
    used_by: tuple[str, ...]

    def request(self) -> ArtifactRequest:
        from .hub import ArtifactRequest

        a = self.artifact
        return ArtifactRequest(
            key=self.key,
            repo=a.repo,
            revision=a.revision,
            files=tuple(a.files),
            declared_size_bytes=a.size.bytes,
            size_tolerance=SIZE_TOLERANCE,
        )


def profile_artifacts(registry: Registry, profile: Profile) -> list[tuple[str, str, Artifact]]:
    """(role, lock key, artifact) for what a profile mounts: weights, drafter, projector."""
    model = registry.models[profile.model]
    out = [("weights", f"{model.id}/{profile.weights}", model.artifacts[profile.weights])]
    if profile.drafter is not None:
        drafter = registry.drafters[profile.drafter.id]
        if drafter.artifact is not None:
            out.append(("drafter", drafter.id, drafter.artifact))
    if profile.mmproj:
        out.append(("mmproj", f"{model.id}/{profile.mmproj}", model.artifacts[profile.mmproj]))
    return out


def artifact_uses(registry: Registry) -> list[ArtifactUse]:
    """Artifacts of models and drafters, keyed `<model>/<variant>` or `<drafter>`, sorted."""
    users: dict[str, list[str]] = {}
    for profile in registry.concrete_profiles():
        for _role, key, _artifact in profile_artifacts(registry, profile):
            users.setdefault(key, []).append(profile.id)
    uses = []
    for model in registry.models.values():
        for variant, artifact in model.artifacts.items():
            key = f"{model.id}/{variant}"
            where = registry.where("models", model.id, ("artifacts", variant))
            uses.append(ArtifactUse(key, artifact, where, tuple(sorted(users.get(key, [])))))
    for drafter in registry.drafters.values():
        if drafter.artifact is not None:
            where = registry.where("drafters", drafter.id, ("artifact",))
            used = tuple(sorted(users.get(drafter.id, [])))
            uses.append(ArtifactUse(drafter.id, drafter.artifact, where, used))
    return sorted(uses, key=lambda u: u.key)


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
        "declared_size_bytes": a.size.bytes,
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
        "declared_size_bytes": a.size.bytes,
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
