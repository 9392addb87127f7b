"""The real pre-commit, run on a registry with this repository's hooks.

pre-commit installs a `language: python` hook by `pip install .` of its repository into an
environment of its own: seconds of work and the package index (or pip's cache). This
repository's package and hooks become a repository of one commit whose id depends only on
their content, in a pre-commit home kept between test runs, so the environment is built once
per version of the package and reused while it is unchanged; `pre-commit gc` drops the others.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "profilegen-tests"
HOME = CACHE / "pre-commit"
# What `pip install .` and the hooks need of this repository.
PACKAGE = ("pyproject.toml", "README.md", "generator", "templates", "schema", ".pre-commit-hooks.yaml")  # fmt: skip
# A commit's id is its content's only when its author, committer and dates are fixed.
_FIXED = {
    "GIT_AUTHOR_NAME": "profilegen",
    "GIT_AUTHOR_EMAIL": "profilegen@example.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "profilegen",
    "GIT_COMMITTER_EMAIL": "profilegen@example.invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
# A hooks repository no run has used for this long is removed (another session may be
# about to clone a newer one).
_STALE_S = 3600


def git(folder: Path, *args: str) -> str:
    env = {**_FIXED, "HOME": str(folder), "PATH": os.environ["PATH"]}
    done = subprocess.run(
        ["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def hooks_repository() -> tuple[Path, str]:
    """(path, commit) of this working tree's package and hooks as they are now."""
    CACHE.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".stage-", dir=CACHE))
    try:
        listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PACKAGE)  # fmt: skip
        for rel in sorted(set(listed.split("\0")) - {""}):
            if (REPO / rel).is_file():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(REPO / rel, stage / rel)
        git(stage, "init", "-q")
        git(stage, "add", "-A")
        git(stage, "commit", "-q", "-m", "profilegen")
        rev = git(stage, "rev-parse", "HEAD").strip()
        found = CACHE / f"hooks-{rev[:16]}"
        if not found.is_dir():
            stage.rename(found)
        os.utime(found)
        return found, rev
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def pre_commit(catalogue: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit ARGS` in `catalogue`, with the kept pre-commit home."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(HOME), "NO_COLOR": "1"}
    env.pop("PROFILEGEN_ROOT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=catalogue, env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip


def collect_garbage(catalogue: Path, keep: Path) -> None:
    """Drops the environments no config in use names (`pre-commit gc`, while the catalogue's
    is still there) and the hooks repositories no run has used for an hour."""
    pre_commit(catalogue, "gc")
    for old in CACHE.glob("hooks-*"):
        if old != keep and time.time() - old.stat().st_mtime > _STALE_S:
            shutil.rmtree(old, ignore_errors=True)
