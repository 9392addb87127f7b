"""Relocatable bundles: a rendered profile plus every patch file, verified before any write."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import ProfilegenError
from ..hub.patchfiles import collect_patch_files, sha256_hex
from ..model import Profile
from ..registry import Registry
from ..write import write_atomic
from .targets.compose import Rendered


def bundle_files(registry: Registry, profile: Profile, rendered: Rendered) -> dict[str, bytes]:
    """Relative path -> bytes of the bundle; every patch file checked against the manifest."""
    files = dict(rendered.files())
    patch_files = collect_patch_files(registry, profile.patches)
    for entry in rendered.manifest.patches:
        for f in entry.files:
            content = patch_files[f"{entry.bundle_dir}/{f.path}"]
            if sha256_hex(content) != f.sha256:
                raise ProfilegenError(f"{entry.id}/{f.path} does not match the manifest")
    files.update(patch_files)
    return files


def write_bundle(out: Path, files: dict[str, bytes]) -> None:
    """Writes the gathered files (installers executable); nothing is written on a bad target."""
    if out.exists() and not out.is_dir():
        raise ProfilegenError(f"{out} exists and is not a folder")
    for name, content in sorted(files.items()):
        executable = name.endswith(".sh")
        mode = stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH
        write_atomic(out / name, content, mode=mode | (stat.S_IXUSR if executable else 0))
