"""`profilegen gpus`: the registry's GPUs, one a line."""

from __future__ import annotations

import click

from ..docs.entities import echo_rows, gpu_rows
from ..errors import EXIT_OK
from .common import Command, Context, format_option, pass_context


@click.command("gpus", cls=Command)
@format_option()
@pass_context
def command(obj: Context, fmt: str) -> int:
    """List the registry's GPUs (RIGS: how many registry rigs have each)."""
    echo_rows(gpu_rows(obj.registry()), fmt)
    return EXIT_OK
