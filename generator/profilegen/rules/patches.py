"""Patches: files present and pinned, profiles list real patches, mounts belong to them."""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..cache import sha256_hex
from ..errors import Finding, Location
from ..manifest import vendored_dir
from . import CheckContext, rule


@rule("patch-vendored", "vendored patch files exist and match their sha256 and size")
def vendored(ctx: CheckContext) -> Iterator[Finding]:
    for patch in sorted(ctx.registry.patches.values(), key=lambda p: p.id):
        if patch.source.kind != "vendored":
            continue
        for i, f in enumerate(patch.source.files):
            where = ctx.registry.where("patches", patch.id, ("source", "files", i))
            path = ctx.root / vendored_dir(patch) / f.path
            if not path.is_file():
                yield ctx.finding(
                    "patch-vendored",
                    where,
                    f"vendored file {vendored_dir(patch)}/{f.path} is missing",
                )
                continue
            content = path.read_bytes()
            if sha256_hex(content) != f.sha256 or len(content) != f.size:
                yield ctx.finding(
                    "patch-vendored",
                    where,
                    f"{vendored_dir(patch)}/{f.path} does not match its pin",
                    hint=f"file has sha256 {sha256_hex(content)} and {len(content)} bytes",
                )


@rule("patch-engine", "a profile's patches target the profile's engine image")
def engine(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for profile in reg.concrete_profiles():
        for i, patch_id in enumerate(profile.patches):
            patch = reg.patches[patch_id]
            if patch.engine != profile.engine:
                yield ctx.finding(
                    "patch-engine",
                    reg.where("profiles", profile.id, ("patches", i)),
                    f"patch {patch_id} targets engine {patch.engine}, the profile runs {profile.engine}",
                    hint="patches are pinned to one image; port the patch or drop it",
                )
        if len(set(profile.patches)) != len(profile.patches):
            yield ctx.finding(
                "patch-engine",
                reg.where("profiles", profile.id, ("patches",)),
                "a patch is listed twice",
            )


@rule("patch-mount", "every patch mount in a generated compose belongs to a listed patch")
def mounts(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for profile in reg.concrete_profiles():
        engine = reg.engines[profile.engine]
        rel = f"compose/{profile.id}/patches.manifest.json"
        compose_rel = f"compose/{profile.id}/compose.yaml"
        listed = {f"{engine.patch_mount_root}/{reg.patches[p].mount_name}" for p in profile.patches}
        path = ctx.root / compose_rel
        if not path.is_file():
            continue
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            doc = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
            services = doc["services"].values()
        except (YAMLError, KeyError, TypeError, AttributeError, OSError, UnicodeDecodeError):
            yield ctx.finding(
                "patch-mount", Location(compose_rel, 1), "generated compose cannot be parsed"
            )
            continue
        root = engine.patch_mount_root.rstrip("/") + "/"
        for service in services:
            for volume in service.get("volumes") or []:
                target = (
                    volume.get("target") if isinstance(volume, dict) else str(volume).split(":")[1]
                )
                if str(target).startswith(root) and target not in listed:
                    yield ctx.finding(
                        "patch-mount",
                        Location(compose_rel, 1),
                        f"mount {target} belongs to no patch of {profile.id}",
                        hint="regenerate with `profilegen render --all`",
                    )
        manifest_path = ctx.root / rel
        if manifest_path.is_file():
            try:
                manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
                ids = [p["id"] for p in manifest["patches"]]
            except (ValueError, KeyError, TypeError, OSError):
                yield ctx.finding("patch-mount", Location(rel, 1), "patch manifest cannot be read")
                continue
            if ids != list(profile.patches):
                yield ctx.finding(
                    "patch-mount",
                    Location(rel, 1),
                    f"manifest applies {ids}, the profile lists {list(profile.patches)}",
                    hint="regenerate with `profilegen render --all`",
                )
