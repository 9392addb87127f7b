"""Relocatable bundles: a rendered profile plus every patch file, verified before any write."""

from __future__ import annotations

from pathlib import Path

from ..errors import ProfilegenError
from ..hub.patchfiles import collect_patch_files, sha256_hex
from ..model import Profile
from ..registry import Registry
from ..write import write_folder
from .manifest import Manifest, manifest_bytes
from .targets.compose import Rendered
from .targets.k8s import RenderedK8s, check_objects
from .targets.k8s_yaml import dump_objects


def verified_patch_files(
    registry: Registry, manifest: Manifest, patch_ids: list[str]
) -> dict[str, bytes]:
    """`patches/<id>/<path>` -> bytes of the named patches, each checked against the manifest."""
    files = collect_patch_files(registry, patch_ids)
    for entry in manifest.patches:
        if entry.id not in patch_ids:
            continue
        for f in entry.files:
            content = files[f"{entry.bundle_dir}/{f.path}"]
            if sha256_hex(content) != f.sha256:
                raise ProfilegenError(f"{entry.id}/{f.path} does not match the manifest")
    return files


def bundle_files(registry: Registry, profile: Profile, rendered: Rendered) -> dict[str, bytes]:
    """Relative path -> bytes of the bundle; every patch file checked against the manifest."""
    files = dict(rendered.files())
    files.update(verified_patch_files(registry, rendered.manifest, list(profile.patches)))
    return files


def k8s_bundle_files(registry: Registry, rendered: RenderedK8s) -> dict[str, bytes]:
    """kubernetes.yaml, patches.yaml (the patches' ConfigMaps, from their verified files) and
    the patch manifest; everything read back and validated before any write."""
    files = dict(rendered.files())
    manifest = rendered.plan.ctx.manifest
    files["patches.manifest.json"] = manifest_bytes(manifest)
    patches = [d.patch.id for d in rendered.plan.deliveries]
    if patches:
        objects = rendered.patch_objects(verified_patch_files(registry, manifest, patches))
        header = f"{rendered.profile_id}: the patch files, delivered as ConfigMaps (apply with kubernetes.yaml)"
        text = dump_objects(objects, header)
        check_objects(f"{rendered.profile_id} patches", text, objects)
        files["patches.yaml"] = text.encode()
    return files


def write_bundle(out: Path, files: dict[str, bytes]) -> None:
    """Writes the gathered files as one unit (installers executable), replacing the entries
    of the same names; `render/output.py` decides whether `out` may take them."""
    write_folder(out, files, executable=lambda name: name.endswith(".sh"))
