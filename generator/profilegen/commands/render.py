"""`profilegen render`: one compose to stdout, a relocatable bundle, or the whole checked-in tree.

A compose to stdout is answered from the result cache while no byte of registry/, of the
registry's templates/ or of profilegen has changed; nothing heavier than hashing runs then.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..cache import Inputs, Store
from ..errors import EXIT_OK, UsageError
from .common import Context, pass_context, timeout_option

if TYPE_CHECKING:
    from ..registry import Registry

RENDER_INPUTS = ("registry", "templates")
# The docs pages also show fit predictions, which read artifact sizes from the lock.
PLAN_INPUTS = (*RENDER_INPUTS, "profilegen.lock.json")


@click.command("render")
@click.argument("profile", required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write a relocatable bundle (compose, manifest, .env.example, patches/) here.",
)
@click.option(
    "--all", "all_", is_flag=True, help="Rewrite the checked-in compose/, gateways/ and docs/."
)
@timeout_option
@pass_context
def command(
    obj: Context, profile: str | None, output: Path | None, all_: bool, timeout: float | None
) -> int:
    """Render PROFILE's compose file to stdout (or a bundle with -o)."""
    if all_:
        if profile or output:
            raise UsageError("--all renders every profile into compose/; give no PROFILE or -o")
        return render_all(obj)
    if not profile:
        raise UsageError("name a PROFILE to render (or use --all)")
    if output is None:
        click.echo(_compose(obj, profile).decode(), nl=False)
        return EXIT_OK
    return _bundle(obj.registry(), profile, output, timeout)


def _compose(obj: Context, name: str) -> bytes:
    root = obj.root
    key = Inputs(root, RENDER_INPUTS, ("render", str(root), name)).key()
    store = Store("render")
    cached = store.get(key)
    if cached is not None:
        return cached
    from ..registry import find_profile
    from ..render import render_profile

    registry = obj.registry()
    found = find_profile(registry, name)
    _refuse_rejected(registry, [found.id])
    compose = render_profile(registry, found).compose
    store.put(key, compose)
    return compose


def _refuse_rejected(registry: Registry, idents: list[str]) -> None:
    """What `check` rejects is not written out: its errors, exit 1."""
    from ..check.scoped import blocking, profile_findings
    from ..errors import RegistryError

    errors = blocking(profile_findings(registry, idents))
    if errors:
        raise RegistryError(errors)


def _bundle(registry: Registry, name: str, output: Path, timeout: float | None) -> int:
    from ..hub.deadline import Deadline
    from ..hub.patchfiles import collect_patch_files
    from ..registry import find_profile
    from ..render import render_profile
    from ..render.bundle import bundle_files, write_bundle

    found = find_profile(registry, name)
    _refuse_rejected(registry, [found.id])
    rendered = render_profile(registry, found)
    # Remote patch files arrive (in parallel, within one deadline) before anything is written.
    collect_patch_files(registry, found.patches, Deadline.start(timeout))
    files = bundle_files(registry, found, rendered)  # gathered and verified before any write
    write_bundle(output, files)
    click.echo(
        f"wrote {output}/ ({len(files)} files): docker compose -f {output / 'compose.yaml'} up",
        err=True,
    )
    return EXIT_OK


def render_all(obj: Context) -> int:
    from ..docs.catalog import remove_orphan_pages
    from ..generated.tree import COMPOSE_DIR, GATEWAYS_DIR, remove_orphans
    from ..write import write_files

    root = obj.root
    plan = _plan(obj)
    changed = write_files({root / rel: content for rel, content in plan.items()})
    profiles = {rel.split("/")[1] for rel in plan if rel.startswith(f"{COMPOSE_DIR}/")}
    gateways = {rel.split("/")[1] for rel in plan if rel.startswith(f"{GATEWAYS_DIR}/")}
    removed = remove_orphans(root, profiles)
    removed += remove_orphans(root, gateways, GATEWAYS_DIR)
    removed += remove_orphan_pages(root, list(plan))
    for path in changed:
        click.echo(f"wrote {path.relative_to(root).as_posix()}")
    for path in removed:
        click.echo(f"removed {path.relative_to(root).as_posix()}")
    if not changed and not removed:
        click.echo(f"{COMPOSE_DIR}/, {GATEWAYS_DIR}/ and docs/ are up to date ({len(plan)} files)")
    return EXIT_OK


def _plan(obj: Context) -> dict[str, bytes]:
    """Every generated file, from the cache while the registry and templates are unchanged."""
    root = obj.root
    key = Inputs(root, PLAN_INPUTS, ("plan", str(root))).key()
    store = Store("plan")
    cached = store.get_object(key)
    if isinstance(cached, dict) and all(isinstance(v, bytes) for v in cached.values()):
        return cached
    from ..errors import RegistryError
    from ..generated.tree import plan_all, plan_gateways

    registry = obj.registry()
    _refuse_rejected(registry, sorted(registry.profiles))
    gateway_errors = plan_gateways(registry)[1]
    if gateway_errors:
        raise RegistryError(gateway_errors)  # before any write
    plan = plan_all(registry)
    store.put_object(key, plan)
    return plan
