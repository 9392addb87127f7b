"""`profilegen list`: the catalogue, narrowed, optionally seen from one rig."""

from __future__ import annotations

import click

from ..docs.listing import ListOptions, run_list
from ..model.common import STATUS_LADDER
from .common import Command, Context, format_option, pass_context


@click.command("list", cls=Command)
@format_option()
@click.option(
    "--rig",
    help="Judge each profile on this rig (a registry rig, or cards: 2x3090 is the registry's "
    "plain rig of two 3090s) and rank by the speed measured on it.",
)
@click.option(
    "--fits", is_flag=True, help="With --rig: only profiles that start on it as they render."
)
@click.option(
    "--detect", is_flag=True, help="Read the local GPUs through NVML and use them as the rig."
)
@click.option("--all", "show_all", is_flag=True, help="Retired profiles too.")
@click.option("--engine", "engines", multiple=True, metavar="ENGINE",
              help="Only this engine: an id, a prefix of one, or a family (vllm, llama.cpp, sglang).")  # fmt: skip
@click.option(
    "--model", "models", multiple=True, metavar="MODEL", help="Only this model (or prefix)."
)
@click.option("--status", "statuses", multiple=True,
              type=click.Choice([*STATUS_LADDER, "retired"]), help="Only this status.")  # fmt: skip
@pass_context
def command(
    obj: Context,
    fmt: str,
    rig: str | None,
    fits: bool,
    detect: bool,
    show_all: bool,
    engines: tuple[str, ...],
    models: tuple[str, ...],
    statuses: tuple[str, ...],
) -> int:
    """List the profiles of the registry (retired ones with --all)."""
    opts = ListOptions(fmt, rig, fits, detect, show_all, engines, models, statuses)
    return run_list(obj.registry(), opts)
