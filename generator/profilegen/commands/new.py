"""`profilegen new`: start a profile as a small file that extends a sibling."""

from __future__ import annotations

import click

from ..authoring.new_profile import NewOptions, run_new
from .common import Context, pass_context


@click.command("new")
@click.argument("new_id")
@click.option("--from", "sibling", required=True, help="Profile to extend (id or upstream key).")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a dotted key, value read as YAML (envelope.max_model_len=131072).",
)
@pass_context
def command(obj: Context, new_id: str, sibling: str, sets: tuple[str, ...]) -> int:
    """Start profile NEW_ID as a small file that extends a sibling."""
    return run_new(obj.root, NewOptions(new_id, sibling, sets))
