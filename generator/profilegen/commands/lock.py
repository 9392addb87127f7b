"""`profilegen lock`: resolve every artifact and remote patch pin into the lock file."""

from __future__ import annotations

import click

from .common import Context, pass_context, timeout_option


@click.command("lock")
@click.option(
    "--offline",
    "offline_only",
    is_flag=True,
    help="Do not ask the Hub: record declared facts, keep still-valid resolved entries.",
)
@timeout_option
@pass_context
def command(obj: Context, offline_only: bool, timeout: float | None) -> int:
    """Resolve every artifact on the Hub and every remote patch pin into the lock file."""
    from ..hub.online import run_lock  # loads huggingface_hub: only when locking

    return run_lock(obj.registry(), offline_only=offline_only, timeout=timeout)
