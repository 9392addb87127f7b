"""Generated files: exactly one fresh compose/<id>/ per profile, nothing orphaned."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location
from ...generated.tree import COMPOSE_DIR
from .base import CheckContext, rule
from .docs import first_difference

GENERATED = ("compose.yaml", "patches.manifest.json", ".env.example")


@rule("disk-missing", "every profile has its generated compose/<id>/ files")
def missing(ctx: CheckContext) -> Iterator[Finding]:
    for rel in sorted(ctx.plan):
        # docs/ pages belong to no one profile: the docs-stale rule reports them.
        if rel.startswith(f"{COMPOSE_DIR}/") and not (ctx.root / rel).is_file():
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
        if not (rel.startswith(f"{COMPOSE_DIR}/") and path.is_file()):
            continue
        on_disk = path.read_bytes()
        if on_disk != content:
            yield ctx.finding(
                "disk-stale",
                Location(rel, first_difference(on_disk, content)),
                f"{rel} differs from a fresh render of registry/profiles/{rel.split('/')[1]}.yaml",
                hint="run `profilegen render --all`; never edit generated files by hand",
            )


@rule("disk-orphan", "no compose/ folder or file without a profile")
def orphans(ctx: CheckContext) -> Iterator[Finding]:
    folder = ctx.root / COMPOSE_DIR
    if not folder.is_dir():
        return
    profiles = set(ctx.registry.profiles)
    for entry in sorted(folder.iterdir()):
        rel = f"{COMPOSE_DIR}/{entry.name}"
        if entry.is_dir() and entry.name not in profiles:
            yield ctx.finding(
                "disk-orphan",
                Location(rel),
                f"{rel}/ has no profile registry/profiles/{entry.name}.yaml",
                hint="delete it, or `profilegen render --all` removes it",
            )
        elif entry.is_dir():
            for extra in sorted(entry.iterdir()):
                if extra.name not in GENERATED:
                    yield ctx.finding(
                        "disk-orphan",
                        Location(f"{rel}/{extra.name}"),
                        f"{rel}/{extra.name} is not a generated file",
                        hint="compose/ holds only generated output",
                    )
        elif not entry.name.startswith("."):
            yield ctx.finding("disk-orphan", Location(rel), f"{rel} is not a profile folder")
