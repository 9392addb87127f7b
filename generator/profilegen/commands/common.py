"""What every command shares: the registry root option and the output formats."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import click

from ..registry import Registry, find_root, open_registry

FORMAT_TEXT_JSON = click.Choice(["text", "json"])


@dataclass(frozen=True)
class Context:
    """The global options, passed to every command."""

    root_option: str | None

    @property
    def root(self) -> Path:
        return find_root(explicit=self.root_option)

    def registry(self) -> Registry:
        return open_registry(self.root)


pass_context = click.make_pass_decorator(Context)


def color(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal (stderr unless told), and never with NO_COLOR set."""
    return (stream or sys.stderr).isatty() and not os.environ.get("NO_COLOR")
