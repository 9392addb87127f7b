"""`profilegen rigs`: the registry's rigs, one a line."""

from __future__ import annotations

import click

from ..docs.entities import echo_rows, rig_rows
from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("rigs")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(obj: Context, fmt: str) -> int:
    """List the registry's rigs (PROFILES: how many profiles not retired use each)."""
    echo_rows(rig_rows(obj.registry()), fmt)
    return 0
