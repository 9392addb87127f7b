"""`profilegen check`: the consistency check CI runs on every pull request."""

from __future__ import annotations

import sys

import click

from ..check.driver import CheckOptions, run_check
from .common import Context, color, pass_context, timeout_option


@click.command("check")
@click.option(
    "--online", is_flag=True, help="Also verify every artifact on the Hub (HF_ENDPOINT, HF_TOKEN)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
)
@click.option("-q", "--quiet", is_flag=True, help="Report errors only (the summary counts all).")
@timeout_option
@pass_context
def command(obj: Context, online: bool, fmt: str, quiet: bool, timeout: float | None) -> int:
    """Check the registry, the generated tree and the lock file (exit 1 on errors).

    The report goes to stdout, one finding a line (`file:line: error: [rule] message`),
    then one summary line.
    """
    opts = CheckOptions(obj.root_option, fmt, online, color(sys.stdout), quiet, timeout)
    return run_check(opts)
