"""`profilegen changelog`: a CHANGELOG entry drafted from a profile and its newest evidence."""

from __future__ import annotations

import click

from ..docs.changelog import run_changelog
from .common import Context, pass_context


@click.command("changelog")
@click.argument("profile")
@pass_context
def command(obj: Context, profile: str) -> int:
    """Draft a CHANGELOG entry (Markdown) from PROFILE and its newest evidence."""
    return run_changelog(obj.registry(), profile)
