"""`profilegen schema`: write (or check) the JSON Schemas of the registry file kinds."""

from __future__ import annotations

import click

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..generated.schemas import build_schemas, schema_drift, schema_names
from ..write import refuse_links, write_files
from .common import Command, Context, echo_json, format_option, pass_context


@click.command("schema", cls=Command, exit_1="--check: a schema is missing or stale")
@click.option("--check", is_flag=True, help="Only report schemas that are missing or stale.")
@format_option()
@pass_context
def command(obj: Context, check: bool, fmt: str) -> int:
    """Write the JSON Schemas of the registry file kinds into schema/."""
    folder = obj.root / "schema"
    refuse_links(obj.root, [folder / n for n in schema_names()])  # nothing read through one
    if check:
        missing, stale = schema_drift(folder)
        if fmt == "json":
            echo_json(
                {
                    "missing": [f"schema/{n}" for n in missing],
                    "stale": [f"schema/{n}" for n in stale],
                }
            )
        else:
            for name in missing:
                click.echo(f"schema/{name}: missing (run `profilegen schema`)", err=True)
            for name in stale:
                click.echo(f"schema/{name}: stale (run `profilegen schema`)", err=True)
        return EXIT_FINDINGS if missing or stale else EXIT_OK
    changed = write_files({folder / n: b for n, b in build_schemas().items()}, root=obj.root)
    wrote = [path.relative_to(obj.root).as_posix() for path in changed]
    if fmt == "json":
        echo_json({"wrote": wrote})
        return EXIT_OK
    for rel in wrote:
        click.echo(f"wrote {rel}")
    return EXIT_OK
