"""Generated files: exactly one fresh compose/<id>/ (and opted-in k8s/<id>/) per profile and
gateways/<id>/ per registry gateway, nothing orphaned, no symlink where they are written (each
is one finding, and nothing is listed or read through it)."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import Finding, Location
from ...generated.links import CHECKED_FILES, CHECKED_FOLDERS, HINT, links, through
from ...generated.tree import (
    COMPOSE_DIR,
    GATEWAY_NAMES,
    GATEWAYS_DIR,
    GENERATED_NAMES,
    K8S_DIR,
    K8S_NAMES,
)
from .base import CheckContext, rule
from .docs import first_difference

# Generated folder -> (the registry kind each subfolder belongs to, the files it holds).
TREES = {
    COMPOSE_DIR: ("profiles", GENERATED_NAMES),
    GATEWAYS_DIR: ("gateways", GATEWAY_NAMES),
    K8S_DIR: ("profiles", K8S_NAMES),
}


def _owner(rel: str) -> tuple[str, str] | None:
    """(kind, id) of a generated file under compose/ or gateways/; None for docs/ pages."""
    top, _, rest = rel.partition("/")
    if top not in TREES or "/" not in rest:
        return None
    return TREES[top][0], rest.split("/")[0]


def _links(ctx: CheckContext) -> dict[str, str]:
    return links(ctx.root, CHECKED_FOLDERS, [*ctx.plan, *CHECKED_FILES])


@rule(
    "disk-link",
    "no symlink where profilegen writes (compose/, gateways/, k8s/, docs/, schema/, the lock)",
    kind="generated",
)
def linked(ctx: CheckContext) -> Iterator[Finding]:
    for rel, message in _links(ctx).items():
        yield ctx.report(Location(rel), message, hint=HINT)


@rule("disk-missing", "every profile and gateway has its generated files", kind="generated")
def missing(ctx: CheckContext) -> Iterator[Finding]:
    found = _links(ctx)
    for rel in sorted(ctx.plan):
        # docs/ pages belong to no one profile: the docs-stale rule reports them.
        owner = _owner(rel)
        if owner is not None and not through(rel, found) and not (ctx.root / rel).is_file():
            yield ctx.report(
                ctx.registry.where(*owner),
                f"generated file {rel} is missing",
                hint="run `profilegen render --all` and commit the result",
            )


@rule("disk-stale", "every generated file is byte-identical to a fresh render", kind="generated")
def stale(ctx: CheckContext) -> Iterator[Finding]:
    found = _links(ctx)
    for rel, content in sorted(ctx.plan.items()):
        path = ctx.root / rel
        owner = _owner(rel)
        if owner is None or through(rel, found) or not path.is_file():
            continue
        on_disk = path.read_bytes()
        if on_disk != content:
            kind, ident = owner
            yield ctx.report(
                Location(rel, first_difference(on_disk, content)),
                f"{rel} differs from a fresh render of registry/{kind}/{ident}.yaml",
                hint="run `profilegen render --all`; never edit generated files by hand",
            )


@rule(
    "disk-orphan",
    "no compose/, gateways/ (or k8s/) folder or file without its registry entry",
    kind="generated",
)
def orphans(ctx: CheckContext) -> Iterator[Finding]:
    found = _links(ctx)
    for top, (kind, names) in TREES.items():
        if through(top, found):
            continue  # disk-link reports it; nothing below it is listed
        if top == K8S_DIR and not ctx.registry.settings.kubernetes.checked_in:
            if (ctx.root / K8S_DIR).is_dir() and any((ctx.root / K8S_DIR).iterdir()):
                yield ctx.report(
                    Location(f"{K8S_DIR}/"),
                    f"{K8S_DIR}/ is generated only when registry/settings.yaml sets "
                    "kubernetes.checked_in",
                    hint="delete it, or opt in",
                )
            continue
        yield from _orphans(ctx, top, kind, names, found)


def _orphans(
    ctx: CheckContext, top: str, kind: str, names: frozenset[str], found: dict[str, str]
) -> Iterator[Finding]:
    folder = ctx.root / top
    if not folder.is_dir():
        return
    owners = set(ctx.registry.table(kind))
    for entry in sorted(folder.iterdir()):
        rel = f"{top}/{entry.name}"
        if rel in found:
            continue
        if entry.is_dir() and entry.name not in owners:
            yield ctx.report(
                Location(rel),
                f"{rel}/ has no {kind[:-1]} registry/{kind}/{entry.name}.yaml",
                hint="delete it, or `profilegen render --all` removes it",
            )
        elif entry.is_dir():
            for extra in sorted(entry.iterdir()):
                if extra.name not in names and f"{rel}/{extra.name}" not in found:
                    yield ctx.report(
                        Location(f"{rel}/{extra.name}"),
                        f"{rel}/{extra.name} is not a generated file",
                        hint=f"{top}/ holds only generated output",
                    )
        elif not entry.name.startswith("."):
            yield ctx.report(Location(rel), f"{rel} is not a {kind[:-1]} folder")
