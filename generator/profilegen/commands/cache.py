"""`profilegen cache`: the content-addressed cache of patch files (PROFILEGEN_CACHE)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import EXIT_FINDINGS, EXIT_OK, printable
from ..hub.cacheadd import Cached, Rejected, cache_add
from .common import Command, Context, echo_json, format_option, pass_context


@click.group("cache")
def command() -> None:
    """The content-addressed cache of patch files (PROFILEGEN_CACHE)."""


@command.command("add", cls=Command, exit_1="a file is not a patch file the registry pins")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@format_option()
@pass_context
def add(obj: Context, files: tuple[Path, ...], fmt: str) -> int:
    """Add downloaded patch files to the cache (for air-gapped rigs).

    Each file is answered for: the ones taken are said on standard output, the ones refused
    (and why) on standard error, and the exit code is 1 when any was refused."""
    answers = cache_add(obj.registry(), list(files))
    rejected = [a for a in answers if isinstance(a, Rejected)]
    if fmt == "json":
        echo_json([_json(a) for a in answers])
    else:
        for entry in answers:
            if isinstance(entry, Cached):
                click.echo(printable(entry.line()))
    # Each refusal on a line of its own: a line break in a file's name is shown escaped.
    if len(answers) == 1 and rejected:
        lines = [f"error: {printable(rejected[0].line())}"]
    elif rejected:
        lines = [f"error: {len(rejected)} of {len(answers)} file(s) not added to the cache:"]
        lines += [f"  {printable(entry.line())}" for entry in rejected]
    else:
        return EXIT_OK
    click.echo("\n".join(lines), err=True)
    return EXIT_FINDINGS


def _json(entry: Cached | Rejected) -> dict[str, object]:
    if isinstance(entry, Cached):
        return {"path": str(entry.path), "sha256": entry.sha256, "patch_files": list(entry.owners)}
    return {"path": str(entry.path), "error": entry.reason}
