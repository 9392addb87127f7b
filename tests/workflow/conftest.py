"""Fixtures for the maintainer workflow: a scratch copy of the repository and a CLI runner."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from tests.support.repo import copy_repo

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.fixture(scope="session")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's data, made self-consistent once per session.

    Other work may leave the checked-in tree a step behind the code; these tests are about
    the workflow, so they start from a copy where schemas and generated files are fresh.
    """
    root = copy_repo(tmp_path_factory.mktemp("pristine") / "root")
    for args in (("schema",), ("render", "--all")):
        run = invoke_in(root, *args)
        assert run.code == 0, run.text
    return root


@pytest.fixture
def repo(pristine: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(pristine, root)
    return root


@pytest.fixture
def invoke(repo: Path) -> Invoke:
    def run(*args: str) -> Run:
        return invoke_in(repo, *args)

    return run
