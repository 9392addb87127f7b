"""`profilegen show`: one profile with every reference resolved."""

from __future__ import annotations

import json

import click

from ..docs.summary import profile_summary, wrapped
from ..docs.table import terminal_width
from ..docs.view import model_view, profile_view
from ..docs.yamlout import dump_yaml
from ..errors import EXIT_OK, hide_credentials
from ..registry import find_profile
from .common import Command, Context, format_option, pass_context


@click.command("show", cls=Command)
@click.argument("profile")
@format_option("yaml")
@pass_context
def command(obj: Context, profile: str, fmt: str) -> int:
    """Show one profile fully resolved (PROFILE: id, unique prefix or upstream key).

    The text form is a summary: engine, image, rig, context, KV, drafter, patches, served names
    and port, the weights' pin, what it is best for, the engine bugs it runs into with their
    mitigations, and the evidence newest first; --format yaml (or json) is every setting,
    resolved. A model id shows the model instead: every fact, and the file, commit and key it
    was read from (or that it was stated by hand), as YAML.
    """
    registry = obj.registry()
    if profile not in registry.profiles and profile in registry.models:
        data = model_view(registry, registry.models[profile])
    else:
        found = find_profile(registry, profile)
        if fmt == "text":
            lines = wrapped(profile_summary(registry, found), terminal_width())
            click.echo(hide_credentials("\n".join(lines)))
            return EXIT_OK
        data = profile_view(registry, found)
    # Registry text reaches a terminal or a CI log: a URL's credentials never do (check
    # refuses them in an evidence source; show says what is there without them).
    text = json.dumps(data, indent=2) + "\n" if fmt == "json" else dump_yaml(data)
    click.echo(hide_credentials(text), nl=False)
    return EXIT_OK
