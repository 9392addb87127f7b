"""`profilegen check`: the consistency check CI runs on every pull request."""

from __future__ import annotations

import sys

import click

from ..check.driver import CheckOptions, run_check
from ..errors import UsageError
from .common import (
    Command,
    Context,
    color,
    format_option,
    offline_option,
    pass_context,
    timeout_option,
)


@click.command(
    "check",
    cls=Command,
    exit_1="an error is found (with --strict, a warning too) or generated files are stale",
)
@click.option(
    "--online", is_flag=True, help="Also verify every artifact on the Hub (HF_ENDPOINT, HF_TOKEN)."
)
@offline_option("the default; it refuses --online")
@format_option("github")
@click.option("-q", "--quiet", is_flag=True, help="Report errors only (the summary counts all).")
@click.option("-v", "--verbose", is_flag=True, help="Every warning on its own line.")
@click.option(
    "--strict", is_flag=True, help="Fail on warnings too (of the change, with --changed)."
)
@click.option(
    "--changed",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[REF]",
    help="Report the warnings of what changed since REF (default: the branch a pull request "
    "targets, origin/HEAD, else main) and of the profiles it reaches; errors anywhere still fail.",
)
@timeout_option
@pass_context
def command(
    obj: Context,
    online: bool,
    offline: bool,
    fmt: str,
    quiet: bool,
    verbose: bool,
    strict: bool,
    changed: str | None,
    timeout: float | None,
) -> int:
    """Check the registry, the generated tree and the lock file (exit 1 on errors).

    The report goes to stdout: every error, one a line (`file:line: error: [rule] message`),
    then the warnings, a kind that repeats as one line with its count (`--verbose` lists each),
    then one summary line.
    """
    if online and offline:
        raise UsageError("--online asks the Hub and --offline (or HF_HUB_OFFLINE) forbids it")
    opts = CheckOptions(
        obj.root_option, fmt, online, color(sys.stdout), quiet, timeout, verbose, strict, changed
    )
    return run_check(opts)
