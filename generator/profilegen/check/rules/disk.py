"""Generated files: exactly one fresh compose/<id>/ (and opted-in k8s/<id>/) per profile,
nothing orphaned."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location
from ...generated.tree import COMPOSE_DIR, K8S_DIR, PROFILE_DIRS
from .base import CheckContext, rule
from .docs import first_difference


def _profile_file(rel: str) -> bool:
    """A file of a per-profile folder (compose/<id>/, k8s/<id>/), not a docs/ page."""
    return rel.split("/", 1)[0] in PROFILE_DIRS


@rule("disk-missing", "every profile has its generated compose/<id>/ files")
def missing(ctx: CheckContext) -> Iterator[Finding]:
    for rel in sorted(ctx.plan):
        # docs/ pages belong to no one profile: the docs-stale rule reports them.
        if _profile_file(rel) and not (ctx.root / rel).is_file():
            profile_id = rel.split("/")[1]
            yield ctx.finding(
                "disk-missing",
                ctx.registry.where("profiles", profile_id),
                f"generated file {rel} is missing",
                hint="run `profilegen render --all` and commit the result",
            )


@rule("disk-stale", "every generated file is byte-identical to a fresh render")
def stale(ctx: CheckContext) -> Iterator[Finding]:
    for rel, content in sorted(ctx.plan.items()):
        path = ctx.root / rel
        if not (_profile_file(rel) and path.is_file()):
            continue
        on_disk = path.read_bytes()
        if on_disk != content:
            yield ctx.finding(
                "disk-stale",
                Location(rel, first_difference(on_disk, content)),
                f"{rel} differs from a fresh render of registry/profiles/{rel.split('/')[1]}.yaml",
                hint="run `profilegen render --all`; never edit generated files by hand",
            )


@rule("disk-orphan", "no compose/ (or k8s/) folder or file without a profile")
def orphans(ctx: CheckContext) -> Iterator[Finding]:
    yield from _orphans(ctx, COMPOSE_DIR)
    if not ctx.registry.settings.kubernetes.checked_in:
        if (ctx.root / K8S_DIR).is_dir() and any((ctx.root / K8S_DIR).iterdir()):
            yield ctx.finding(
                "disk-orphan",
                Location(f"{K8S_DIR}/"),
                f"{K8S_DIR}/ is generated only when registry/settings.yaml sets "
                "kubernetes.checked_in",
                hint="delete it, or opt in",
            )
        return
    yield from _orphans(ctx, K8S_DIR)


def _orphans(ctx: CheckContext, top: str) -> Iterator[Finding]:
    folder = ctx.root / top
    if not folder.is_dir():
        return
    profiles = set(ctx.registry.profiles)
    names = PROFILE_DIRS[top]
    for entry in sorted(folder.iterdir()):
        rel = f"{top}/{entry.name}"
        if entry.is_dir() and entry.name not in profiles:
            yield ctx.finding(
                "disk-orphan",
                Location(rel),
                f"{rel}/ has no profile registry/profiles/{entry.name}.yaml",
                hint="delete it, or `profilegen render --all` removes it",
            )
        elif entry.is_dir():
            for extra in sorted(entry.iterdir()):
                if extra.name not in names:
                    yield ctx.finding(
                        "disk-orphan",
                        Location(f"{rel}/{extra.name}"),
                        f"{rel}/{extra.name} is not a generated file",
                        hint=f"{top}/ holds only generated output",
                    )
        elif not entry.name.startswith("."):
            yield ctx.finding("disk-orphan", Location(rel), f"{rel} is not a profile folder")
