"""`profilegen fetch`: download a profile's artifacts where its compose mounts them."""

from __future__ import annotations

from pathlib import Path

import click

from .common import (
    Command,
    Context,
    format_option,
    model_dir_option,
    offline_option,
    pass_context,
    timeout_option,
)


@click.command("fetch", cls=Command, exit_1="a file is missing or does not match the lock")
@click.argument("profile")
@model_dir_option
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print what would be downloaded and where, from the lock file (no network).",
)
@offline_option("download nothing, verify the files already there")
@timeout_option
@format_option()
@pass_context
def command(
    obj: Context,
    profile: str,
    model_dir: Path,
    dry_run: bool,
    offline: bool,
    timeout: float | None,
    fmt: str,
) -> int:
    """Download PROFILE's artifacts into MODEL_DIR and verify them against the lock file.

    --timeout bounds the talk with the Hub; a download runs as long as bytes keep arriving
    and fails once none has come for that long.
    """
    from ..hub.fetch import FetchOptions, run_fetch  # loads huggingface_hub

    return run_fetch(
        obj.registry(), FetchOptions(profile, model_dir, dry_run, fmt, timeout, offline)
    )
