"""`profilegen show`: one profile with every reference resolved."""

from __future__ import annotations

import json

import click

from ..docs.view import model_view, profile_view
from ..docs.yamlout import dump_yaml
from ..errors import EXIT_OK
from ..registry import find_profile
from .common import Command, Context, format_option, pass_context


@click.command("show", cls=Command)
@click.argument("profile")
@format_option("yaml", default="yaml")
@pass_context
def command(obj: Context, profile: str, fmt: str) -> int:
    """Show one profile fully resolved (PROFILE: id, unique prefix or upstream key).

    A model id shows the model instead: every fact, and the file, commit and key it was read
    from (or that it was stated by hand). The text form is the YAML document.
    """
    registry = obj.registry()
    if profile not in registry.profiles and profile in registry.models:
        data = model_view(registry, registry.models[profile])
    else:
        data = profile_view(registry, find_profile(registry, profile))
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(dump_yaml(data), nl=False)
    return EXIT_OK
