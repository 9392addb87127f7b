"""`profilegen diff A B`: what two profiles do differently (settings, patches, engine flags,
evidence)."""

from __future__ import annotations

import json
from typing import Any

import click

from ..docs.diff import Change, evidence_text, flag_changes, patch_changes, setting_changes
from ..errors import EXIT_OK
from ..explain.core import Scenario, explain
from ..registry import find_profile
from .common import Command, Context, format_option, pass_context


@click.command("diff", cls=Command)
@click.argument("a")
@click.argument("b")
@format_option()
@pass_context
def command(obj: Context, a: str, b: str, fmt: str) -> int:
    """What profiles A and B do differently: settings, patches, the engine flags their
    containers pass at their defaults (as `explain` finds them), and what was measured."""
    registry = obj.registry()
    pa, pb = find_profile(registry, a), find_profile(registry, b)
    runs = [explain(registry, p, Scenario()) for p in (pa, pb)]
    sections: dict[str, list[Change]] = {
        "settings": setting_changes(pa, pb),
        "patches": patch_changes(pa, pb),
        "engine flags": flag_changes(
            runs[0].argv if runs[0].launched else None, runs[1].argv if runs[1].launched else None
        ),
    }
    evidence = {pa.id: evidence_text(pa), pb.id: evidence_text(pb)}
    if fmt == "json":
        data: dict[str, Any] = {
            "a": pa.id,
            "b": pb.id,
            **{k.replace(" ", "_"): [c.__dict__ for c in v] for k, v in sections.items()},
            "evidence": evidence,
        }
        click.echo(json.dumps(data, indent=2))
        return EXIT_OK
    click.echo(f"A {pa.id}: {pa.title}\nB {pb.id}: {pb.title}")
    for title, changes in sections.items():
        click.echo(f"\n{title}:" + ("" if changes else " the same"))
        width = max((len(c.what) for c in changes), default=0)
        for c in changes:
            click.echo(f"  {c.what.ljust(width)}  A {_shown(c.a)}")
            click.echo(f"  {''.ljust(width)}  B {_shown(c.b)}")
    for side, p, run in (("A", pa, runs[0]), ("B", pb, runs[1])):
        if not run.launched:
            click.echo(f"\n{side} ({p.id}) does not start at its defaults: {run.message}")
    click.echo("\nevidence:")
    for side, p in (("A", pa), ("B", pb)):
        click.echo(f"  {side} {evidence[p.id]}")
    return EXIT_OK


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return json.dumps(value) if isinstance(value, (dict, list, bool)) else str(value)
