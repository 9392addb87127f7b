"""`profilegen cache`: the content-addressed cache of patch files (PROFILEGEN_CACHE)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import EXIT_OK
from ..hub.patchfiles import cache_add
from .common import Command, Context, echo_json, format_option, pass_context


@click.group("cache")
def command() -> None:
    """The content-addressed cache of patch files (PROFILEGEN_CACHE)."""


@command.command("add", cls=Command, exit_1="a file is not a patch file the registry pins")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@format_option()
@pass_context
def add(obj: Context, files: tuple[Path, ...], fmt: str) -> int:
    """Add downloaded patch files to the cache (for air-gapped rigs)."""
    cached = cache_add(obj.registry(), list(files))
    if fmt == "json":
        echo_json(
            [
                {"path": str(c.path), "sha256": c.sha256, "patch_files": list(c.owners)}
                for c in cached
            ]
        )
        return EXIT_OK
    for entry in cached:
        click.echo(entry.line())
    return EXIT_OK
