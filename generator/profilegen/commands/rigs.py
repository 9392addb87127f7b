"""`profilegen rigs`: the registry's rigs, one a line."""

from __future__ import annotations

import click

from ..docs.entities import echo_rows, rig_rows
from ..errors import EXIT_OK
from .common import Command, Context, format_option, pass_context


@click.command("rigs", cls=Command)
@format_option()
@pass_context
def command(obj: Context, fmt: str) -> int:
    """List the registry's rigs (PROFILES: how many profiles not retired use each)."""
    echo_rows(rig_rows(obj.registry()), fmt)
    return EXIT_OK
