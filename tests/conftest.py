"""Test-session settings and the fixtures every suite shares (a scratch repository, a CLI runner)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.support.cli import Invoke, Run, invoke_in
from tests.support.repo import copy_repo

_PRIVATE_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # profilegen caches compiled templates, schemas and patch files under PROFILEGEN_CACHE:
    # the tests use a private one, never the user's ~/.cache/profilegen.
    if "PROFILEGEN_CACHE" not in os.environ:
        folder = tempfile.mkdtemp(prefix="profilegen-test-cache-")
        _PRIVATE_CACHE.append(folder)
        os.environ["PROFILEGEN_CACHE"] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _PRIVATE_CACHE:
        shutil.rmtree(folder, ignore_errors=True)


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's data, made self-consistent once per session.

    Other work may leave the checked-in tree a step behind the code; these tests are about
    the workflow, so they start from a copy where schemas and generated files are fresh.
    """
    root = copy_repo(tmp_path_factory.mktemp("pristine") / "root")
    for args in (("schema",), ("lock", "--offline"), ("render", "--all")):
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
