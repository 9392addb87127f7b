"""The real pre-commit runs this repository's hooks on a registry `profilegen init` wrote, with
the config init wrote: only its `repo` and `rev` point at a local copy of this repository
(tests/support/precommit.py: the hook environment is built once per version of the package)."""

from __future__ import annotations

import re
import shutil
from importlib import metadata
from pathlib import Path

import pytest

from profilegen.scaffold.packaged import PRE_COMMIT, REPOSITORY
from tests.support.precommit import collect_garbage, git, hooks_repository, pre_commit

pytestmark = pytest.mark.precommit


def _results(output: str) -> dict[str, str]:
    """Each hook's name and verdict, from pre-commit's `name.....Passed` lines."""
    return dict(re.findall(r"^(profilegen[^.\n]*?)\.+(Passed|Failed)$", output, re.M))


def test_the_hooks_pass_a_new_registry_and_fail_a_stale_one(
    initialised: Path, tmp_path: Path
) -> None:
    hooks, rev = hooks_repository()
    catalogue = Path(shutil.copytree(initialised, tmp_path / "catalogue"))
    config = catalogue / PRE_COMMIT
    written = config.read_text()
    pinned = (
        f"  - repo: https://github.com/{REPOSITORY}\n    rev: v{metadata.version('profilegen')}\n"
    )
    assert pinned in written
    config.write_text(written.replace(pinned, f"  - repo: {hooks}\n    rev: {rev}\n"))
    git(catalogue, "init", "-q")
    git(catalogue, "add", "-A")
    try:
        run = pre_commit(catalogue, "run", "--all-files", "--color", "never")
        assert run.returncode == 0, run.stdout + run.stderr
        assert _results(run.stdout) == {
            "profilegen check": "Passed",
            "profilegen render up to date": "Passed",
        }

        (catalogue / "docs/CATALOG.md").unlink()
        git(catalogue, "add", "-A")
        run = pre_commit(catalogue, "run", "--all-files", "--color", "never")
        assert run.returncode == 1, run.stdout + run.stderr
        assert _results(run.stdout) == {
            "profilegen check": "Failed",
            "profilegen render up to date": "Failed",
        }
        assert (
            "docs/CATALOG.md: error: [docs-stale] generated page docs/CATALOG.md is missing"
            in run.stdout
        )
        assert "docs/CATALOG.md: missing (run `profilegen render --all`)" in run.stdout
    finally:
        collect_garbage(catalogue, hooks)
