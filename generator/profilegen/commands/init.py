"""`profilegen init [DIR]`: start a registry of one's own, checked by profilegen in CI and
before every commit."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..errors import EXIT_OK
from ..scaffold.init_registry import InitOptions, run_init, shown
from ..scaffold.shapes import DEFAULT_RIG, GPUS
from .common import Command, echo_json, format_option


@click.command(
    "init", cls=Command, exit_1="never: what it writes passes check, or nothing is written"
)
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--rig",
    default=DEFAULT_RIG,
    show_default=True,
    metavar="COUNTxGPU",
    help=f"The first rig: how many cards of which GPU ({', '.join(GPUS)}), such as 2x5090.",
)
@format_option()
def command(folder: Path, rig: str, fmt: str) -> int:
    """Start a new registry in FOLDER (default: here) that `profilegen check` passes.

    It writes registry/ (settings, the rig and its GPU), schema/, the lock file, docs/, a
    GitHub workflow and a pre-commit config that run profilegen's check, pinned to this
    release. It refuses a folder that already holds a registry, and writes over nothing.
    """
    written = run_init(InitOptions(folder, rig))
    if fmt == "json":
        echo_json({"folder": str(folder), "rig": rig, "wrote": list(written)})
        return EXIT_OK
    for rel in written:
        click.echo(f"wrote {rel}")
    enter = "" if folder == Path() else f"cd {shlex.quote(str(folder))} && "
    click.echo(
        f"a new registry in {shown(folder)}. Next:\n"
        f"  {enter}git init && pre-commit install   # the hooks, before every commit\n"
        "  profilegen check   # passes: no profile yet\n"
        "then add engines, models and profiles under registry/ (`profilegen model add`, "
        "`profilegen new`), and `profilegen render --all` before each commit.",
        err=True,
    )
    return EXIT_OK
