"""`profilegen engine facts ENGINE_ID`: an engine entry's facts from its real release."""

from __future__ import annotations

import json

import click

from ..errors import EXIT_OK
from .common import Command, Context, echo_json, format_option, offline_option, pass_context


@click.group("engine")
def command() -> None:
    """Engine entries and what their real releases accept."""


@command.command("facts", cls=Command)
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
@offline_option("use only releases already in the cache")
@click.option("--dry-run", is_flag=True, help="Print the facts file; write nothing.")
@format_option()
@pass_context
def facts(
    obj: Context,
    engine_id: str,
    version: str | None,
    none: str | None,
    offline: bool,
    dry_run: bool,
    fmt: str,
) -> int:
    """Regenerate registry/engines/facts/ENGINE_ID.json from the engine's release.

    A maintainer command: it downloads the release from the package index (once; it is
    cached by content under PROFILEGEN_CACHE) and reads it with the release's own parser.
    With --format json: the files written, and with --dry-run the facts themselves.
    """
    from ..facts.engine import build_facts, dump, engine_entry, write_facts

    registry = obj.registry()
    engine = engine_entry(registry, engine_id)
    if none is None:
        click.echo(f"reading {engine.id}'s release…", err=True)
    found = build_facts(engine, version=version, offline=offline, none=none)
    if dry_run and fmt == "json":
        echo_json({"engine": engine.id, "wrote": [], "facts": json.loads(dump(found))})
        return EXIT_OK
    if dry_run:
        click.echo(dump(found).decode(), nl=False)
        return EXIT_OK
    wrote = [p.relative_to(registry.root).as_posix() for p in write_facts(registry.root, found)]
    if fmt == "json":
        echo_json({"engine": engine.id, "wrote": wrote})
    for rel in wrote if fmt == "text" else ():
        click.echo(f"wrote {rel}", err=True)
    return EXIT_OK
