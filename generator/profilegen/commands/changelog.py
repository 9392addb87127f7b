"""`profilegen changelog`: a CHANGELOG entry drafted from a profile and its newest evidence."""

from __future__ import annotations

import click

from ..docs.changelog import run_changelog
from .common import Command, Context, format_option, pass_context


@click.command("changelog", cls=Command)
@click.argument("profile")
@format_option()
@pass_context
def command(obj: Context, profile: str, fmt: str) -> int:
    """Draft a CHANGELOG entry (Markdown) from PROFILE and its newest evidence.

    With --format json: the entry's bullets (label, text, the lines under it) and its Markdown.
    """
    return run_changelog(obj.registry(), profile, fmt)
