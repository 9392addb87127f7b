"""`profilegen upgrade ENGINE_ID --to VERSION`: what the engine's next release would refuse."""

from __future__ import annotations

import click

from .common import Command, Context, format_option, offline_option, pass_context


@click.command("upgrade", cls=Command, exit_1="the release would refuse a profile")
@click.argument("engine_id")
@click.option(
    "--to",
    "version",
    required=True,
    help="The release to move to, as the engine ids spell it (0.33.0, v0.33.0, b11434).",
)
@format_option()
@offline_option("use only releases already in the cache")
@click.option("--write", is_flag=True, help="Add the new engine entry and its facts; nothing else.")
@pass_context
def command(
    obj: Context, engine_id: str, version: str, fmt: str, offline: bool, write: bool
) -> int:
    """For every profile on ENGINE_ID: what release VERSION would refuse.

    Flags, values, JSON keys and variables its release does not take, patches that no longer
    apply (and patches whose marker the release already carries), and release defaults that
    size memory which moved. A maintainer command: the release is downloaded once and cached.
    A profile whose patch files (or the release's source) cannot be had is listed as not
    rehearsed, never as ok. Exit 1 when a profile would be refused; exit 2 when a profile's
    patches could not be rehearsed (its verdict is incomplete), whatever else was found.
    """
    from ..facts.engine import build_facts, engine_entry
    from ..facts.upgrade import compare, new_engine_id, release_version, report, write_entry

    registry = obj.registry()
    engine = engine_entry(registry, engine_id)
    version = release_version(version)
    click.echo(f"reading {engine.kind} {version}…", err=True)
    new_id = new_engine_id(engine, version)
    new = build_facts(engine, version=version, offline=offline, new_id=new_id)
    text, code = report(engine, version, compare(registry, engine, new, offline), fmt)
    click.echo(text)
    if write:
        for path in write_entry(registry, engine, new, version):
            click.echo(f"wrote {path.relative_to(registry.root)}", err=True)
    return code
