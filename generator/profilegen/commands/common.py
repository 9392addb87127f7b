"""What every command shares: the registry root option and the output formats."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from ..errors import UsageError
from ..registry import find_root

if TYPE_CHECKING:
    from ..registry import Registry

FORMAT_TEXT_JSON = click.Choice(["text", "json"])
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
