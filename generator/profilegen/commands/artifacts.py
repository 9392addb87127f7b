"""`profilegen artifacts`: every Hub artifact, its files and who uses it."""

from __future__ import annotations

import click

from ..docs.artifacts import run_artifacts
from .common import Command, Context, format_option, pass_context


@click.command("artifacts", cls=Command)
@format_option()
@pass_context
def command(obj: Context, fmt: str) -> int:
    """List every Hub artifact the registry uses, with what the lock file knows."""
    return run_artifacts(obj.registry(), fmt)
