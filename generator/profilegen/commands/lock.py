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


@click.command(
    "lock",
    cls=Command,
    exit_1="an artifact cannot be resolved, or a patch pin verified (nothing is written)",
)
@offline_option("record declared facts, keep the still-valid resolved entries")
@timeout_option
@format_option()
@pass_context
def command(obj: Context, offline: bool, timeout: float | None, fmt: str) -> int:
    """Resolve every artifact on the Hub and every remote patch pin into the lock file.

    Every remote patch pin is verified against the file's bytes before it is written: read
    from the patch cache, or, for a changed or new pin online, downloaded. A file the cache
    lacks is said, and keeps the lock's own entry only where that entry is the same pin; a
    changed or new pin that cannot be verified leaves the lock unwritten (exit 1, or 2 when
    its host cannot be reached).
    """
    from ..hub.online import run_lock  # loads huggingface_hub: only when locking
    from ..lockfile.lock import LOCK_NAME

    locked = run_lock(obj.registry(), offline_only=offline, timeout=timeout)
    if fmt == "json":
        echo_json({"file": LOCK_NAME, **locked.__dict__})
        return EXIT_OK
    kept = locked.patch_kept
    if kept:
        click.echo(
            f"warning: {len(kept)} remote patch file(s) not in the patch cache, kept as {LOCK_NAME} "
            "had them (not verified now): " + ", ".join(kept),
            err=True,
        )
    checked = locked.patch_files - len(kept)
    click.echo(
        f"wrote {LOCK_NAME}: {locked.artifacts} artifacts ({locked.resolved} resolved on the "
        f"Hub), {locked.patch_files} remote patch files ({checked} verified against their "
        f"bytes{f', {len(kept)} kept from the lock' if kept else ''})",
        err=True,
    )
    return EXIT_OK
