"""The command line: the `profilegen` group, its error boundary and lazily loaded commands."""

from __future__ import annotations

import importlib
import io
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import click

from .errors import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    ProfilegenError,
    RegistryError,
    printable,
)

# Command name -> module under profilegen.commands; a command's module (and what it imports)
# is loaded only when that command runs.
COMMANDS = {
    "artifacts": "artifacts",
    "bench": "bench",
    "cache": "cache",
    "changelog": "changelog",
    "check": "check",
    "cli-doc": "cli_doc",
    "diff": "diff",
    "engine": "engine",
    "engines": "engines",
    "explain": "explain",
    "fetch": "fetch",
    "fit": "fit",
    "gateway": "gateway",
    "gpus": "gpus",
    "import": "import_",
    "init": "init",
    "list": "list",
    "lock": "lock",
    "model": "model",
    "new": "new",
    "rehearse": "rehearse",
    "render": "render",
    "rigs": "rigs",
    "schema": "schema",
    "show": "show",
    "upgrade": "upgrade",
    "verify": "verify",
}


class Group(click.Group):
    """Loads commands on demand; reports profilegen errors without a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        loaded = importlib.import_module(f"profilegen.commands.{module}")
        command: click.Command = loaded.command
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            code = super().invoke(ctx)
            sys.stdout.flush()  # a closed pipe shows here, inside the boundary
        except BrokenPipeError:
            # `profilegen list | head -1`: the reader has all it wanted. Exit quietly, and
            # point stdout at /dev/null so the interpreter's final flush cannot fail either.
            _detach_stdout()
            ctx.exit(EXIT_OK)
        except RegistryError as exc:
            from .check.report import format_findings, summary

            click.echo(format_findings(exc.findings, "text", color=_color()), err=True)
            click.echo(summary(exc.findings), err=True)
            ctx.exit(EXIT_FINDINGS)
        except ProfilegenError as exc:
            click.echo(printable(f"error: {exc}", keep="\n"), err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except OSError as exc:
            # The disk or the network said no: the user's environment (input), not a bug.
            where = f" {exc.filename}" if exc.filename else ""
            click.echo(printable(f"error: cannot access{where}: {exc.strerror or exc}"), err=True)
            ctx.exit(EXIT_USAGE)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # a bug in profilegen, not the user's mistake
            if os.environ.get("PROFILEGEN_DEBUG"):
                traceback.print_exc()
            click.echo(
                f"internal error: {type(exc).__name__}: {exc}\n"
                "This is a bug in profilegen; please report it with PROFILEGEN_DEBUG=1 output.",
                err=True,
            )
            ctx.exit(EXIT_INTERNAL)
        ctx.exit(code if isinstance(code, int) else 0)


def _detach_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file descriptor (an in-process test runner): nothing to detach


def _color() -> bool:
    from .commands.common import color

    return color()


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    help="Registry root (default: PROFILEGEN_ROOT or the nearest parent with registry/).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Recompute everything, reusing no cached result (also PROFILEGEN_NO_CACHE=1).",
)
@click.version_option(package_name="profilegen")
@click.pass_context
def cli(ctx: click.Context, root: str | None, no_cache: bool) -> None:
    """Declarative LLM-serving profiles rendered to docker-compose files."""
    from .cache import configure
    from .commands.common import Context
    from .errors import UsageError
    from .hub.endpoint import endpoint_problem
    from .resources import cache_problem

    if (problem := cache_problem()) is not None:
        raise UsageError(f"{problem} (point it at a folder, or unset it)")
    if (problem := endpoint_problem()) is not None:
        raise UsageError(f"{problem}: set it to the Hub's URL, or unset it")
    configure(enabled=not no_cache)
    ctx.obj = Context(root)


class _Closed(io.TextIOBase):
    """Stands in for standard output when the process was started without it (`>&-`):
    printing there is a usage error, not a crash; a command that prints nothing runs."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        from .errors import UsageError

        raise UsageError("standard output is closed: there is nowhere to print the result")


def main() -> None:
    if sys.stdout is None:
        sys.stdout = _Closed()
    if sys.stderr is None:  # nowhere to say anything: the exit status still tells
        sys.stderr = Path(os.devnull).open("w")  # noqa: SIM115 (lives as long as the process)
    try:
        cli(prog_name="profilegen")
    except ProfilegenError as exc:  # before any command ran (`profilegen --help >&-`)
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
