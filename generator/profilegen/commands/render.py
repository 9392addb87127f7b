"""`profilegen render`: one compose to stdout, a relocatable bundle, or the whole checked-in tree."""

from __future__ import annotations

from pathlib import Path

import click

from ..docs.catalog import remove_orphan_pages
from ..errors import EXIT_OK, RegistryError, UsageError
from ..generated.tree import COMPOSE_DIR, GATEWAYS_DIR, plan_all, plan_gateways, remove_orphans
from ..hub.deadline import Deadline
from ..hub.patchfiles import collect_patch_files
from ..registry import Registry, find_profile
from ..render import render_profile
from ..render.bundle import bundle_files, write_bundle
from ..write import write_files
from .common import Context, pass_context, timeout_option


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
    registry = obj.registry()
    if all_:
        if profile or output:
            raise UsageError("--all renders every profile into compose/; give no PROFILE or -o")
        return render_all(registry)
    if not profile:
        raise UsageError("name a PROFILE to render (or use --all)")
    found = find_profile(registry, profile)
    rendered = render_profile(registry, found)
    if output is None:
        click.echo(rendered.compose.decode(), nl=False)
        return EXIT_OK
    # Remote patch files arrive (in parallel, within one deadline) before anything is written.
    collect_patch_files(registry, found.patches, Deadline.start(timeout))
    files = bundle_files(registry, found, rendered)  # gathered and verified before any write
    write_bundle(output, files)
    click.echo(
        f"wrote {output}/ ({len(files)} files): docker compose -f {output / 'compose.yaml'} up",
        err=True,
    )
    return EXIT_OK


def render_all(registry: Registry) -> int:
    gateway_errors = plan_gateways(registry)[1]
    if gateway_errors:
        raise RegistryError(gateway_errors)  # before any write
    plan = plan_all(registry)
    changed = write_files({registry.root / rel: content for rel, content in plan.items()})
    profiles = {rel.split("/")[1] for rel in plan if rel.startswith(f"{COMPOSE_DIR}/")}
    removed = remove_orphans(registry.root, profiles)
    removed += remove_orphans(registry.root, set(registry.gateways), GATEWAYS_DIR)
    removed += remove_orphan_pages(registry.root, list(plan))
    for path in changed:
        click.echo(f"wrote {path.relative_to(registry.root).as_posix()}")
    for path in removed:
        click.echo(f"removed {path.relative_to(registry.root).as_posix()}")
    if not changed and not removed:
        click.echo(f"{COMPOSE_DIR}/, {GATEWAYS_DIR}/ and docs/ are up to date ({len(plan)} files)")
    return EXIT_OK
