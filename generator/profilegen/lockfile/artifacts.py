"""Every Hub artifact the registry uses: weights, drafters and projectors, and who uses them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import Location
from ..model import Profile
from ..model.model import Artifact
from ..registry import Registry
from .records import ArtifactRequest

# Declared sizes are rounded ("15.9 GB"): 5% absorbs that rounding, while a GB/GiB
# mix-up (7.4%) still shows.
SIZE_TOLERANCE = 0.05
SHARD = re.compile(r"^(?P<stem>.+)-(?P<no>[0-9]{5})-of-(?P<of>[0-9]{5})\.gguf$")


@dataclass(frozen=True)
class ArtifactUse:
    key: str
    artifact: Artifact
    location: Location
    used_by: tuple[str, ...]

    def request(self) -> ArtifactRequest:
        a = self.artifact
        return ArtifactRequest(
            key=self.key,
            repo=a.repo,
            revision=a.revision,
            files=tuple(a.files),
            declared_size_bytes=a.size_bytes,
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


def promised_shards(files: tuple[str, ...]) -> list[str]:
    """Shards a split GGUF's file names promise that the list does not name."""
    listed = set(files)
    out = []
    for path in files:
        match = SHARD.match(path)
        if match is None:
            continue
        total = int(match.group("of"))
        for n in range(1, total + 1):
            name = f"{match.group('stem')}-{n:05d}-of-{total:05d}.gguf"
            if name not in listed and name not in out:
                out.append(name)
    return out
