"""`profilegen gpus`: the registry's GPUs, one a line."""

from __future__ import annotations

import click

from ..docs.entities import echo_rows, gpu_rows
from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("gpus")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(obj: Context, fmt: str) -> int:
    """List the registry's GPUs (RIGS: how many registry rigs have each)."""
    echo_rows(gpu_rows(obj.registry()), fmt)
    return 0
