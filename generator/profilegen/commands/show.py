"""`profilegen show`: one profile with every reference resolved."""

from __future__ import annotations

import json

import click

from ..docs.view import profile_view
from ..docs.yamlout import dump_yaml
from ..errors import EXIT_OK
from ..registry import find_profile
from .common import Context, pass_context


@click.command("show")
@click.argument("profile")
@click.option(
    "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)
@pass_context
def command(obj: Context, profile: str, fmt: str) -> int:
    """Show one profile fully resolved (PROFILE: id, unique prefix or upstream key)."""
    registry = obj.registry()
    data = profile_view(registry, find_profile(registry, profile))
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(dump_yaml(data), nl=False)
    return EXIT_OK
