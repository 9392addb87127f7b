"""`profilegen lock`: resolve every artifact and remote patch pin into the lock file."""

from __future__ import annotations

import click

from ..errors import EXIT_OK
from .common import (
    Command,
    Context,
    echo_json,
    format_option,
    offline_option,
    pass_context,
    timeout_option,
)


@click.command("lock", cls=Command, exit_1="an artifact cannot be resolved (nothing is written)")
@offline_option("record declared facts, keep the still-valid resolved entries")
@timeout_option
@format_option()
@pass_context
def command(obj: Context, offline: bool, timeout: float | None, fmt: str) -> int:
    """Resolve every artifact on the Hub and every remote patch pin into the lock file."""
    from ..hub.online import run_lock  # loads huggingface_hub: only when locking
    from ..lockfile.lock import LOCK_NAME

    locked = run_lock(obj.registry(), offline_only=offline, timeout=timeout)
    if fmt == "json":
        echo_json({"file": LOCK_NAME, **locked.__dict__})
        return EXIT_OK
    click.echo(
        f"wrote {LOCK_NAME}: {locked.artifacts} artifacts ({locked.resolved} resolved on the "
        f"Hub), {locked.patch_files} remote patch files",
        err=True,
    )
    return EXIT_OK
