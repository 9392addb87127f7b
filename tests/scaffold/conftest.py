"""A registry as `profilegen init` writes it: made once per test process, copied per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from profilegen.cli import cli
from tests.support.cli import Run


def init(folder: Path, *args: str) -> Run:
    """`profilegen init FOLDER ARGS...`, in-process."""
    result = CliRunner().invoke(cli, ["init", str(folder), *args], catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture(scope="session")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("init") / "catalogue"
    run = init(folder)
    assert run.code == 0, run.text
    return folder


@pytest.fixture
def catalogue(initialised: Path, tmp_path: Path) -> Path:
    """A fresh copy of the initialised registry, the test's own to change."""
    return Path(shutil.copytree(initialised, tmp_path / "catalogue", symlinks=True))
