"""Running the CLI in-process, the way every suite does: exit code, stdout and stderr apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from profilegen.cli import cli


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


Invoke = Callable[..., Run]


def invoke_in(root: Path, *args: str) -> Run:
    result = CliRunner().invoke(cli, ["--root", str(root), *args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)
