"""`profilegen cache`: the content-addressed cache of patch files (PROFILEGEN_CACHE)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import EXIT_OK
from ..hub.patchfiles import cache_add
from .common import Context, pass_context


@click.group("cache")
def command() -> None:
    """The content-addressed cache of patch files (PROFILEGEN_CACHE)."""


@command.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@pass_context
def add(obj: Context, files: tuple[Path, ...]) -> int:
    """Add downloaded patch files to the cache (for air-gapped rigs)."""
    for line in cache_add(obj.registry(), list(files)):
        click.echo(line)
    return EXIT_OK
