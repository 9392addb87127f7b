"""`profilegen verify`: the model files on the rig against the lock, before the engine starts."""

from __future__ import annotations

from pathlib import Path

import click

from .common import FORMAT_TEXT_JSON, Context, model_dir_option, pass_context


@click.command("verify")
@click.argument("profile")
@model_dir_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@pass_context
def command(obj: Context, profile: str, model_dir: Path, fmt: str) -> int:
    """Check PROFILE's files in MODEL_DIR against the lock: every shard, size and sha256.

    Never touches the network. Files hashed before and unchanged since (size, mtime, ctime,
    inode) are taken from MODEL_DIR/.profilegen-verified.json instead of being read again.
    Exit 1 names each missing, truncated or corrupt file.
    """
    from ..hub.preflight import VerifyOptions, run_verify

    return run_verify(obj.registry(), VerifyOptions(profile, model_dir, fmt))
