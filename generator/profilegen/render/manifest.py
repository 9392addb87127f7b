"""The patch-delivery manifest: which files a profile's entrypoint verifies and applies."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..model import Patch, Profile
from ..registry import Registry

MANIFEST_VERSION = 1


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ManifestFile(_Out):
    path: str
    size: int
    sha256: str
    url: str | None = None


class ManifestStep(_Out):
    method: Literal["diff", "script"]
    file: str
    strip: int | None = None
    interpreter: str | None = None
    target: str | None = None
    marker: str | None = None


class ManifestActivation(_Out):
    env: str
    default: bool
    exports: dict[str, str]


class ManifestPatch(_Out):
    id: str
    title: str
    source: Literal["vendored", "remote"]
    origin: str
    files: list[ManifestFile]
    mount_target: str
    # True: mount_target is the single file itself (a chat template), not a folder.
    mount_file: bool = False
    bundle_dir: str
    steps: list[ManifestStep]
    fail_closed: bool
    activation: ManifestActivation | None
    capability: str
    foundational: bool
    upstream_ref: str | None
    drop_when: str


class Manifest(_Out):
    manifest_version: int
    profile: str
    engine_image: str
    package_dir: str | None
    patches: list[ManifestPatch]


def _patch_entry(registry: Registry, profile: Profile, patch: Patch) -> ManifestPatch:
    engine = registry.engines[profile.engine]
    source = patch.source
    origin = source.base_url if source.base_url else patch.vendored_dir + "/"
    activation = None
    if patch.activation is not None:
        default = profile.switches.get(patch.activation.env, patch.activation.default)
        activation = ManifestActivation(
            env=patch.activation.env, default=default, exports=dict(patch.activation.exports)
        )
    return ManifestPatch(
        id=patch.id,
        title=patch.title,
        source=source.kind,
        origin=origin,
        files=[
            ManifestFile(path=f.path, size=f.size, sha256=f.sha256, url=source.url(f))
            for f in source.files
        ],
        mount_target=patch.mount_file or f"{engine.patch_mount_root}/{patch.mount_name}",
        mount_file=patch.mount_file is not None,
        bundle_dir=f"patches/{patch.id}",
        steps=[
            ManifestStep(
                method=s.method,
                file=s.file,
                strip=getattr(s, "strip", None),
                interpreter=getattr(s, "interpreter", None),
                target=s.target,
                marker=s.marker,
            )
            for s in patch.steps
        ],
        fail_closed=patch.fail_closed,
        activation=activation,
        capability=patch.capability,
        foundational=patch.foundational,
        upstream_ref=patch.upstream_ref,
        drop_when=patch.drop_when,
    )


def build_manifest(registry: Registry, profile: Profile) -> Manifest:
    engine = registry.engines[profile.engine]
    return Manifest(
        manifest_version=MANIFEST_VERSION,
        profile=profile.id,
        engine_image=engine.image_ref,
        package_dir=engine.package_dir,
        patches=[_patch_entry(registry, profile, registry.patches[p]) for p in profile.patches],
    )


def manifest_bytes(manifest: Manifest) -> bytes:
    data = manifest.model_dump(mode="json")
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
