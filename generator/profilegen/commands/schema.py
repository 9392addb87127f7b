"""`profilegen schema`: write (or check) the JSON Schemas of the registry file kinds."""

from __future__ import annotations

import click

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..generated.schemas import build_schemas, stale_schemas
from ..write import write_files
from .common import Command, Context, echo_json, format_option, pass_context


@click.command("schema", cls=Command, exit_1="--check: a schema is missing or stale")
@click.option("--check", is_flag=True, help="Only report schemas that are missing or stale.")
@format_option()
@pass_context
def command(obj: Context, check: bool, fmt: str) -> int:
    """Write the JSON Schemas of the registry file kinds into schema/."""
    folder = obj.root / "schema"
    if check:
        stale = [f"schema/{name}" for name in stale_schemas(folder)]
        if fmt == "json":
            echo_json({"stale": stale})
        for rel in stale if fmt == "text" else ():
            click.echo(f"{rel}: stale (run `profilegen schema`)", err=True)
        return EXIT_FINDINGS if stale else EXIT_OK
    changed = write_files({folder / n: b for n, b in build_schemas().items()})
    wrote = [path.relative_to(obj.root).as_posix() for path in changed]
    if fmt == "json":
        echo_json({"wrote": wrote})
        return EXIT_OK
    for rel in wrote:
        click.echo(f"wrote {rel}")
    return EXIT_OK
