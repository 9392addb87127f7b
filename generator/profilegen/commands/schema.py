"""`profilegen schema`: write (or check) the JSON Schemas of the registry file kinds."""

from __future__ import annotations

import click

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..generated.schemas import build_schemas, schema_drift
from ..write import write_files
from .common import Context, pass_context


@click.command("schema")
@click.option("--check", is_flag=True, help="Only report schemas that are missing or stale.")
@pass_context
def command(obj: Context, check: bool) -> int:
    """Write the JSON Schemas of the registry file kinds into schema/."""
    folder = obj.root / "schema"
    if check:
        missing, stale = schema_drift(folder)
        for name in missing:
            click.echo(f"schema/{name}: missing (run `profilegen schema`)", err=True)
        for name in stale:
            click.echo(f"schema/{name}: stale (run `profilegen schema`)", err=True)
        return EXIT_FINDINGS if missing or stale else EXIT_OK
    changed = write_files({folder / n: b for n, b in build_schemas().items()})
    for path in changed:
        click.echo(f"wrote {path.relative_to(obj.root).as_posix()}")
    return EXIT_OK
