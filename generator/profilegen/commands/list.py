"""`profilegen list`: the catalogue, optionally re-targeted to a rig."""

from __future__ import annotations

import click

from ..docs.listing import ListOptions, run_list
from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("list")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@click.option("--rig", help="Show how each profile fits this rig (see `fit`).")
@click.option("--fits", is_flag=True, help="With --rig: only profiles predicted to fit.")
@click.option(
    "--detect", is_flag=True, help="Read the local GPUs through NVML and use them as the rig."
)
@pass_context
def command(obj: Context, fmt: str, rig: str | None, fits: bool, detect: bool) -> int:
    """List the profiles of the registry."""
    return run_list(obj.registry(), ListOptions(fmt=fmt, rig=rig, fits=fits, detect=detect))
