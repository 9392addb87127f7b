"""`profilegen engine facts ENGINE_ID`: an engine entry's facts from its real release."""

from __future__ import annotations

import click

from ..errors import EXIT_OK
from .common import Context, pass_context


@click.group("engine")
def command() -> None:
    """Engine entries and what their real releases accept."""


@command.command("facts")
@click.argument("engine_id")
@click.option(
    "--version",
    help="Read this release of the engine's family instead of the one its image carries.",
)
@click.option(
    "--none",
    "none",
    metavar="REASON",
    help="Declare that the engine has no public release to read facts from, and why.",
)
@click.option("--offline", is_flag=True, help="Use only releases already in the cache.")
@click.option("--dry-run", is_flag=True, help="Print the facts file; write nothing.")
@pass_context
def facts(
    obj: Context,
    engine_id: str,
    version: str | None,
    none: str | None,
    offline: bool,
    dry_run: bool,
) -> int:
    """Regenerate registry/engines/facts/ENGINE_ID.json from the engine's release.

    A maintainer command: it downloads the release from the package index (once; it is
    cached by content under PROFILEGEN_CACHE) and reads it with the release's own parser.
    """
    from ..facts.engine import build_facts, dump, engine_entry, write_facts

    registry = obj.registry()
    engine = engine_entry(registry, engine_id)
    if none is None:
        click.echo(f"reading {engine.id}'s release…", err=True)
    found = build_facts(engine, version=version, offline=offline, none=none)
    if dry_run:
        click.echo(dump(found).decode(), nl=False)
        return EXIT_OK
    for path in write_facts(registry.root, found):
        click.echo(f"wrote {path.relative_to(registry.root)}", err=True)
    return EXIT_OK
