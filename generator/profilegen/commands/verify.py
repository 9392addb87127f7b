"""`profilegen verify`: the model files on the rig against the lock, before the engine starts."""

from __future__ import annotations

from pathlib import Path

import click

from .common import FORMAT_TEXT_JSON, Context, pass_context


@click.command("verify")
@click.argument("profile")
@click.option(
    "--model-dir",
    required=True,
    envvar="MODEL_DIR",
    show_envvar=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Host folder the compose mounts as the model cache (MODEL_DIR).",
)
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
