"""Patches: files present and pinned, profiles list real patches, mounts belong to them."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location, Severity
from ...generated.links import through_link
from ...hub.patchfiles import sha256_hex
from ...model import Patch
from ...registry.files import (
    HIDDEN,
    LOOP,
    MAX_VENDORED_FILE,
    OUTSIDE,
    Refused,
    foreign,
    hidden,
    kept_empty,
    read_inside,
    unlisted,
)
from ...registry.safejson import load_json
from .base import CheckContext, rule


@rule("patch-vendored", "vendored patch files exist and match their sha256 and size")
def vendored(ctx: CheckContext) -> Iterator[Finding]:
    for patch in sorted(ctx.registry.patches.values(), key=lambda p: p.id):
        if patch.source.kind != "vendored":
            continue
        for i, f in enumerate(patch.source.files):
            where = ctx.registry.where("patches", patch.id, ("source", "files", i))
            path = ctx.root / patch.vendored_dir / f.path
            name = f"{patch.vendored_dir}/{f.path}"
            if not path.exists() and not path.is_symlink():
                yield ctx.report(where, f"vendored file {name} is missing")
                continue
            try:
                content = read_inside(ctx.root, path, MAX_VENDORED_FILE)
            except Refused as exc:
                yield ctx.report(where, f"vendored file {name} {exc}")
                continue
            if sha256_hex(content) != f.sha256 or len(content) != f.size:
                yield ctx.report(
                    where,
                    f"{name} does not match its pin",
                    hint=f"file has sha256 {sha256_hex(content)} and {len(content)} bytes",
                )
        yield from _unlisted(ctx, patch)
    yield from _orphan_folders(ctx)


def _unlisted(ctx: CheckContext, patch: Patch) -> Iterator[Finding]:
    """What a vendored patch's folder holds beside its listed files (a hidden file too): a
    stray, never read; a symlink out of the repository is an error."""
    listed = {f.path for f in patch.source.files}
    for entry, problem in unlisted(ctx.root, ctx.root / patch.vendored_dir, listed):
        rel = entry.relative_to(ctx.root).as_posix()
        rel = foreign(rel) or rel
        name = rel.rsplit("/", 1)[-1]
        hint = f"{patch.vendored_dir}/ holds the files registry/patches/{patch.id}.yaml lists"
        if problem in (OUTSIDE, LOOP):
            yield ctx.report(Location(rel), f"{name} {problem}", hint=hint)
            continue
        what = problem.split(",")[0] if problem else HIDDEN if hidden(entry) else "is not listed"
        message = f"{name} {what}: it is not read"
        yield ctx.report(Location(rel), message, hint=hint, severity=Severity.WARNING)


def _orphan_folders(ctx: CheckContext) -> Iterator[Finding]:
    """Folders under registry/patches/files/ that no vendored patch reads."""
    folder = ctx.root / "registry" / "patches" / "files"
    owners = {p.id for p in ctx.registry.patches.values() if p.source.kind == "vendored"}
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        if kept_empty(entry) or entry.name in owners:
            continue
        rel = entry.relative_to(ctx.root).as_posix()
        rel = foreign(rel) or rel  # a name that is not UTF-8, its bytes escaped
        yield ctx.report(
            Location(rel),
            f"{rel.rsplit('/', 1)[-1]} belongs to no vendored patch: it is not read",
            hint="registry/patches/files/<patch-id>/ holds the files of that vendored patch",
            severity=Severity.WARNING,
        )


@rule("patch-engine", "a profile's patches target the profile's engine image")
def engine(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for profile in reg.concrete_profiles():
        for i, patch_id in enumerate(profile.patches):
            patch = reg.patches[patch_id]
            if patch.engine != profile.engine:
                yield ctx.report(
                    ctx.at(profile.id, "patches", i),
                    f"patch {patch_id} targets engine {patch.engine}, the profile runs {profile.engine}",
                    hint="patches are pinned to one image; port the patch or drop it",
                )
        if len(set(profile.patches)) != len(profile.patches):
            yield ctx.report(
                ctx.at(profile.id, "patches"),
                "a patch is listed twice",
            )


def _mount_targets(text: str) -> list[str] | None:
    """Bind-mount targets of every service in a compose file; None when it does not parse."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        services = YAML(typ="safe").load(text)["services"].values()
        targets = []
        for service in services:
            for volume in service.get("volumes") or []:
                short = not isinstance(volume, dict)
                targets.append(str(volume).split(":")[1] if short else str(volume.get("target")))
        return targets
    except (YAMLError, KeyError, TypeError, AttributeError, IndexError):
        return None


@rule(
    "patch-mount",
    "every patch mount in a generated compose belongs to a listed patch",
    kind="generated",
)
def mounts(ctx: CheckContext) -> Iterator[Finding]:
    reg = ctx.registry
    for profile in reg.concrete_profiles():
        engine = reg.engines[profile.engine]
        root = engine.patch_mount_root.rstrip("/") + "/"
        listed = {root + reg.patches[p].mount_name for p in profile.patches}
        compose_rel = f"compose/{profile.id}/compose.yaml"
        manifest_rel = f"compose/{profile.id}/patches.manifest.json"
        # A file byte-identical to a fresh render has exactly the listed patches (render
        # builds mounts from them and verifies its output): only hand-edited files are read.
        compose = _edited(ctx, compose_rel)
        if compose is not None:
            targets = _mount_targets(compose.decode("utf-8", errors="replace"))
            if targets is None:
                yield ctx.report(Location(compose_rel, 1), "generated compose cannot be parsed")
            for target in targets or []:
                if target.startswith(root) and target not in listed:
                    yield ctx.report(
                        Location(compose_rel, _line_of(compose, target)),
                        f"mount {target} belongs to no patch of {profile.id}",
                        hint="regenerate with `profilegen render --all`",
                    )
        manifest = _edited(ctx, manifest_rel)
        if manifest is not None:
            try:
                ids = [p["id"] for p in load_json(manifest)["patches"]]
            except (ValueError, KeyError, TypeError):
                yield ctx.report(Location(manifest_rel, 1), "patch manifest cannot be read")
                continue
            if ids != list(profile.patches):
                yield ctx.report(
                    Location(manifest_rel, 1),
                    f"manifest applies {ids}, the profile lists {list(profile.patches)}",
                    hint="regenerate with `profilegen render --all`",
                )


def _edited(ctx: CheckContext, rel: str) -> bytes | None:
    """The file's bytes when it exists and differs from a fresh render, else None."""
    path = ctx.root / rel
    if through_link(ctx.root, rel) or not path.is_file():
        return None  # disk-link reports a symlink; nothing is read through it
    content = path.read_bytes()
    return None if content == ctx.plan.get(rel) else content


def _line_of(content: bytes, needle: str) -> int:
    for number, line in enumerate(content.decode("utf-8", errors="replace").split("\n"), 1):
        if needle in line:
            return number
    return 1
