"""`profilegen rehearse [PROFILE...]`: patch chains applied to the engines' real source."""

from __future__ import annotations

import click

from .common import Command, Context, format_option, offline_option, pass_context


@click.command("rehearse", cls=Command, exit_1="a profile's patches are refused")
@click.argument("profiles", nargs=-1)
@offline_option("use only source trees already in the cache")
@format_option()
@pass_context
def command(obj: Context, profiles: tuple[str, ...], offline: bool, fmt: str) -> int:
    """Apply each profile's patches, in boot order, to its engine's real source tree.

    Every PROFILE (default: every profile with patches) has its own entrypoint run in a box
    laid out as its container, over a copy of its engine release's package at the image's
    path; every file a step changed is byte-compiled. The release is downloaded once and
    cached (PROFILEGEN_CACHE): a second run needs no network. Every profile is named and
    counted: one whose patch files or release source cannot be had (--offline: are not in the
    cache) is not rehearsed, and so is one profilegen cannot rehearse (a compiled release).
    Exit 1 when a profile's patches are refused; exit 2 when a profile's patch files or its
    engine's source could not be had (its verdict is unknown), whatever else was found.
    """
    from ..facts.rehearsals import check_named, plan, report, run

    registry = obj.registry()
    names = list(profiles)
    work = plan(registry, names)
    check_named(work, names)
    results, unavailable = run(registry, work, offline)
    text, code = report(results, work.skipped, unavailable, fmt)
    click.echo(text)
    return code
