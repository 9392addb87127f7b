"""`profilegen list`: the catalogue, narrowed, sorted, optionally seen from one rig."""

from __future__ import annotations

import click

from ..docs.choosing import SORTS, USES, ContextLength, ListOptions
from ..docs.listing import run_list
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
    "--fits",
    is_flag=True,
    help="With --rig: only profiles that start on it, as they render or at a smaller context "
    "(the largest that would is shown).",
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
@click.option("--for", "uses", multiple=True, type=click.Choice(list(USES)),
              help="Only profiles whose best_for (or upstream's pick) names this use.")  # fmt: skip
@click.option("--min-context", type=ContextLength(), metavar="TOKENS",
              help="Only profiles serving at least this context (131072 or 128k).")  # fmt: skip
@click.option("--sort", type=click.Choice(SORTS),
              help="Order: speed (on --rig; the default there), context, or quality "
              "(upstream's scores, then its picks); ties: production first.")  # fmt: skip
@click.option(
    "--wide", is_flag=True, help="Every column, titles whole (default: fit the terminal)."
)
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
    uses: tuple[str, ...],
    min_context: int | None,
    sort: str | None,
    wide: bool,
) -> int:
    """List the profiles of the registry (retired ones with --all).

    The table fits the terminal (COLUMNS, else its width); --wide shows every column.
    """
    opts = ListOptions(
        fmt, rig, fits, detect, show_all, engines, models, statuses, uses, min_context, sort, wide
    )
    return run_list(obj.registry(), opts)
