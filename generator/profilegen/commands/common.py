"""What every command shares: the registry root, the output formats, `--offline`, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from ..errors import UsageError
from ..registry import find_root

if TYPE_CHECKING:
    from ..registry import Registry

# Every --format choice any command offers: text for people, json for scripts (the same facts),
# yaml where the result is registry data, github for check's annotations.
FORMATS = ("text", "json", "yaml", "github")
# Variables that mean --offline (huggingface_hub's own, and profilegen's for patch files).
OFFLINE_ENV = ("HF_HUB_OFFLINE", "PROFILEGEN_OFFLINE")
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Context:
    """The global options, passed to every command."""

    root_option: str | None

    @property
    def root(self) -> Path:
        return find_root(explicit=self.root_option)

    def registry(self) -> Registry:
        from ..registry import open_registry_cached

        return open_registry_cached(self.root)


pass_context = click.make_pass_decorator(Context)


def color(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal (stderr unless told), and never with NO_COLOR set."""
    return (stream or sys.stderr).isatty() and not os.environ.get("NO_COLOR")


def model_dir_option(fn: F) -> F:
    """`--model-dir DIR` (or MODEL_DIR): where the compose mounts the model cache."""
    option = click.option(
        "--model-dir",
        required=True,
        envvar="MODEL_DIR",
        show_envvar=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Host folder the compose mounts as the model cache (MODEL_DIR).",
    )
    return option(fn)


class Seconds(click.ParamType[float]):
    """A deadline: a finite number of seconds more than 0 and at most a day."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        from ..hub.deadline import seconds_or_none, seconds_wanted

        found = value if isinstance(value, float) else seconds_or_none(str(value))
        if found is None:
            raise seconds_wanted("--timeout", str(value))
        return found


def timeout_option(fn: F) -> F:
    """`--timeout SECONDS`: one deadline for all the network access of a command."""
    option = click.option(
        "--timeout",
        type=Seconds(),
        metavar="SECONDS",
        help="Deadline for all network access of this command, in total "
        "(default: PROFILEGEN_NETWORK_TIMEOUT, else 30).",
    )
    return option(fn)


def _output_path(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Path | None:
    if value is None:
        return None
    if not value.strip():
        # Path("") is the current folder: a slip of the shell (`-o "$UNSET"`), never meant.
        raise UsageError("-o needs a folder (an empty name would mean the current folder)")
    return Path(value)


def output_options(what: str) -> Callable[[F], F]:
    """`-o DIR` (a bundle written as one unit) and `--force` (over another's bundle or files)."""

    def decorate(fn: F) -> F:
        force = click.option(
            "--force",
            is_flag=True,
            help="Write into a folder holding another profile's bundle or other files.",
        )
        output = click.option(
            "-o", "--output", type=click.Path(file_okay=False), callback=_output_path, help=what
        )
        return output(force(fn))

    return decorate


def echo_json(doc: Any) -> None:
    """A `--format json` result: one document on stdout."""
    click.echo(json.dumps(doc, indent=2))


def files_json(files: Mapping[str, bytes], *, content: bool = False) -> list[dict[str, Any]]:
    """Files written (or printed) as a json result lists them: path, size, sha256, and the
    text itself where it is the result (`render PROFILE` to stdout)."""
    out = []
    for path, data in sorted(files.items()):
        entry: dict[str, Any] = {
            "path": path,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        if content:
            entry["content"] = data.decode("utf-8", errors="replace")
        out.append(entry)
    return out


def format_option(*choices: str, default: str = "text") -> Callable[[F], F]:
    """`--format`: text and json (the same result as one document), and what else it takes."""
    offered = ("text", "json", *choices)
    assert set(offered) <= set(FORMATS) and default in offered, offered
    option = click.option(
        "--format",
        "fmt",
        type=click.Choice(offered),
        default=default,
        show_default=True,
        help="How to print the result: text for people, json for scripts"
        + (f", {' or '.join(choices)}" if choices else "")
        + ".",
    )
    return option


def offline_env() -> bool:
    """Whether HF_HUB_OFFLINE (or PROFILEGEN_OFFLINE) says to stay off the network."""
    return any(
        os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
        for name in OFFLINE_ENV
    )


def _offline(_ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    return value or offline_env()


def offline_option(what: str) -> Callable[[F], F]:
    """`--offline`, the same as HF_HUB_OFFLINE=1: `what` says what the command does instead."""
    option = click.option(
        "--offline",
        is_flag=True,
        callback=_offline,
        help=f"Reach no network: {what} (also HF_HUB_OFFLINE=1).",
    )
    return option


class Command(click.Command):
    """A profilegen command: it says when it exits 1, for its help and docs/CLI.md.

    Every command exits 0 when it did what was asked, 1 on findings (`exit_1`, and any
    registry error), 2 on a usage or input error or an unreachable service, 3 on a bug.
    """

    def __init__(self, *args: Any, exit_1: str = "the registry has errors", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.exit_1 = exit_1


class DefaultGroup(click.Group):
    """A group whose default command takes the words no subcommand claims (`fit PROFILE`).

    `fit calibration` and `fit log FILE` are subcommands; anything else (`fit PROFILE
    --tp 2`, `fit --format json PROFILE`, a bare `fit`) goes to the default command, whose
    options the group's help lists too.
    """

    def __init__(self, *args: Any, default: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        if first not in self.commands and first not in ctx.help_option_names:
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def default_command(self) -> click.Command:
        return self.commands[self.default]

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        words = self.default_command().collect_usage_pieces(ctx)
        formatter.write_usage(ctx.command_path, " ".join(words))
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="   or: ")

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        params = self.default_command().get_params(ctx)
        records = [p.get_help_record(ctx) for p in params if isinstance(p, click.Option)]
        with formatter.section("Options"):
            formatter.write_dl([r for r in records if r is not None])
        self.format_commands(ctx, formatter)
